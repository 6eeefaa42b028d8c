#include "program_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

#include <sys/stat.h>

#include "error.h"
#include "program_verify.h"

namespace spyre {

namespace {

constexpr char kMagic[4] = {'S', 'P', 'Y', 'R'};
constexpr size_t kHeaderBytes = 12;        // magic, version, section count
constexpr size_t kSectionHeaderBytes = 12; // id, payload length
constexpr uint32_t kMaxStringBytes = 256;  // names; verify_program enforces the same bound
constexpr size_t kInstrBytes = 2 + 1 + 1 + 4 * kNumOperands;
constexpr size_t kDmaBytes = 4 + 3 * 4 + 3 * 8 + 3 * 4;
constexpr size_t kMmBytes = 6 * 4;
constexpr size_t kMinBufferBytes = 4 + 1 + 1 + 1 + 4 + 1;  // empty name, rank 0, empty order
constexpr uint64_t kMaxFileBytes = uint64_t(1) << 30;

enum Section { HEAD, BUFS, DMAD, MMDS, CODE, kNumSections };
constexpr const char *kSectionIds[kNumSections] = {"HEAD", "BUFS", "DMAD", "MMDS", "CODE"};

// --- writing ---

class Writer {
public:
    std::vector<uint8_t> out;

    void u8(uint8_t v) { out.push_back(v); }
    void u16(uint16_t v) { le(v, 2); }
    void u32(uint32_t v) { le(v, 4); }
    void i32(int32_t v) { le(uint32_t(v), 4); }
    void i64(int64_t v) { le(uint64_t(v), 8); }
    void u64(uint64_t v) { le(v, 8); }
    void bytes(const void *p, size_t n) {
        const uint8_t *b = static_cast<const uint8_t *>(p);
        out.insert(out.end(), b, b + n);
    }
    void str(const std::string &s, const char *what) {
        if (s.size() > UINT32_MAX) throw_error("cannot serialize ", what, ": string too long");
        u32(uint32_t(s.size()));
        bytes(s.data(), s.size());
    }
    void count(size_t n) {
        if (n > UINT32_MAX) throw_error("cannot serialize a table of ", n, " entries (at most 2^32-1)");
        u32(uint32_t(n));
    }
    // Starts a section; returns the position of its length field for end_section().
    size_t begin_section(Section s) {
        bytes(kSectionIds[s], 4);
        size_t at = out.size();
        u64(0);
        return at;
    }
    void end_section(size_t at) {
        uint64_t len = out.size() - at - 8;
        for (int i = 0; i < 8; i++) out[at + i] = uint8_t(len >> (8 * i));
    }

private:
    void le(uint64_t v, int n) {
        for (int i = 0; i < n; i++) out.push_back(uint8_t(v >> (8 * i)));
    }
};

// --- reading ---

std::string printable_id(const uint8_t *p) {
    std::string s;
    for (int i = 0; i < 4; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\'') {
            s += char(p[i]);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", p[i]);
            s += buf;
        }
    }
    return s;
}

// A bounded cursor over one region of the file; every error names the region and the file offset.
class Reader {
public:
    Reader(const uint8_t *data, size_t begin, size_t end, std::string region)
        : data_(data), pos_(begin), end_(end), region_(std::move(region)) {}

    size_t pos() const { return pos_; }
    size_t left() const { return end_ - pos_; }

    template <typename... Parts>
    [[noreturn]] void fail_at(size_t offset, const Parts &...parts) const {
        throw_error(region_, " at offset ", offset, ": ", parts...);
    }

    uint8_t u8(const char *what) { return uint8_t(le(1, what)); }
    uint16_t u16(const char *what) { return uint16_t(le(2, what)); }
    uint32_t u32(const char *what) { return uint32_t(le(4, what)); }
    int32_t i32(const char *what) { return int32_t(uint32_t(le(4, what))); }
    int64_t i64(const char *what) { return int64_t(le(8, what)); }
    uint64_t u64(const char *what) { return le(8, what); }

    std::string str(const char *what) {
        size_t at = pos_;
        uint32_t n = u32(what);
        if (n > kMaxStringBytes) fail_at(at, what, " length ", n, " exceeds ", kMaxStringBytes, " bytes");
        need(n, at, what);
        std::string s(reinterpret_cast<const char *>(data_ + pos_), n);
        pos_ += n;
        return s;
    }

    // Reads a count and checks that `count` records of at least `min_bytes` each fit in what is left,
    // so a hostile count fails here rather than driving a huge allocation or a long loop.
    uint32_t count(const char *what, size_t min_bytes) {
        size_t at = pos_;
        uint32_t n = u32(what);
        if (uint64_t(n) * min_bytes > left())
            fail_at(at, what, " count ", n, " needs at least ", uint64_t(n) * min_bytes, " bytes, only ", left(),
                    " left in the section");
        return n;
    }

    void need(size_t n, size_t at, const char *what) const {
        if (n > left()) fail_at(at, "truncated ", what, ": needs ", n, " bytes, ", left(), " left");
    }

    void expect_end() const {
        if (pos_ != end_) fail_at(pos_, left(), " unread bytes at the end of the section");
    }

private:
    uint64_t le(int n, const char *what) {
        need(size_t(n), pos_, what);
        uint64_t v = 0;
        for (int i = 0; i < n; i++) v |= uint64_t(data_[pos_ + i]) << (8 * i);
        pos_ += size_t(n);
        return v;
    }

    const uint8_t *data_;
    size_t pos_, end_;
    std::string region_;
};

void read_head(Reader &r, DeviceProgram &p) {
    p.kernel_name = r.str("kernel name");
    p.num_cores = r.i32("num_cores");
}

void read_bufs(Reader &r, DeviceProgram &p) {
    uint32_t n = r.count("buffer", kMinBufferBytes);
    p.buffers.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
        BufferDecl b;
        b.name = r.str("buffer name");
        size_t at = r.pos();
        uint8_t kind = r.u8("buffer kind");
        if (kind > uint8_t(BufferKind::InOut)) r.fail_at(at, "buffer ", i, ": unknown kind ", int(kind));
        b.kind = BufferKind(kind);
        at = r.pos();
        uint8_t dt = r.u8("buffer dtype");
        if (!dtype_valid(dt)) r.fail_at(at, "buffer ", i, ": unknown dtype ", int(dt));
        b.type = DType(dt);
        at = r.pos();
        uint8_t rank = r.u8("buffer rank");
        if (rank < 1 || rank > kMaxBufferRank) r.fail_at(at, "buffer ", i, ": rank ", int(rank), " out of range 1..", int(kMaxBufferRank));
        for (int d = 0; d < rank; d++) b.shape.push_back(r.i64("buffer extent"));
        b.layout.stick_dim = r.i32("buffer stick_dim");
        at = r.pos();
        uint8_t order_len = r.u8("buffer order length");
        if (order_len > kMaxBufferRank)
            r.fail_at(at, "buffer ", i, ": layout order length ", int(order_len), " exceeds ", int(kMaxBufferRank));
        for (int d = 0; d < order_len; d++) b.layout.order.push_back(r.i32("buffer order"));
        p.buffers.push_back(std::move(b));
    }
}

void read_dmad(Reader &r, DeviceProgram &p) {
    uint32_t n = r.count("dma descriptor", kDmaBytes);
    p.dma.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
        DmaDesc d;
        d.sticks = r.i32("dma sticks");
        for (auto &c : d.count) c = r.i32("dma count");
        for (auto &s : d.dram_stride) s = r.i64("dma dram stride");
        for (auto &s : d.lx_stride) s = r.i32("dma lx stride");
        p.dma.push_back(d);
    }
}

void read_mmds(Reader &r, DeviceProgram &p) {
    uint32_t n = r.count("matmul descriptor", kMmBytes);
    p.mm.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
        MatmulDesc d;
        d.m = r.i32("matmul m");
        d.n = r.i32("matmul n");
        d.k = r.i32("matmul k");
        d.lda = r.i32("matmul lda");
        d.ldb = r.i32("matmul ldb");
        d.ldc = r.i32("matmul ldc");
        p.mm.push_back(d);
    }
}

void read_code(Reader &r, DeviceProgram &p) {
    uint32_t n = r.count("instruction", kInstrBytes);
    p.code.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
        Instr in;
        size_t at = r.pos();
        uint16_t op = r.u16("opcode");
        if (!opcode_valid(op)) r.fail_at(at, "instruction ", i, ": unknown opcode ", op);
        in.op = Opcode(op);
        in.dtype = r.u8("instruction dtype");
        in.mode = r.u8("instruction mode");
        for (auto &a : in.a) a = r.i32("operand");
        p.code.push_back(in);
    }
}

// The file section that holds each part verify_program checks.
int section_of(VerifiedPart part) {
    switch (part) {
    case VerifiedPart::Head: return HEAD;
    case VerifiedPart::Buffers: return BUFS;
    case VerifiedPart::DmaDescriptors: return DMAD;
    case VerifiedPart::MatmulDescriptors: return MMDS;
    case VerifiedPart::Code: return CODE;
    }
    return HEAD;
}

}  // namespace

std::vector<uint8_t> serialize_program(const DeviceProgram &p) {
    Writer w;
    w.bytes(kMagic, 4);
    w.u32(DeviceProgram::kFormatVersion);
    w.u32(kNumSections);

    size_t at = w.begin_section(HEAD);
    w.str(p.kernel_name, "kernel name");
    w.i32(p.num_cores);
    w.end_section(at);

    at = w.begin_section(BUFS);
    w.count(p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); i++) {
        const BufferDecl &b = p.buffers[i];
        // Rank and order length are one byte in the file; anything longer cannot be represented.
        if (b.shape.size() > 255 || b.layout.order.size() > 255)
            throw_error("cannot serialize buffer ", i, ": rank or layout order longer than 255");
        w.str(b.name, "buffer name");
        w.u8(uint8_t(b.kind));
        w.u8(uint8_t(b.type));
        w.u8(uint8_t(b.shape.size()));
        for (int64_t e : b.shape) w.i64(e);
        w.i32(b.layout.stick_dim);
        w.u8(uint8_t(b.layout.order.size()));
        for (int o : b.layout.order) w.i32(o);
    }
    w.end_section(at);

    at = w.begin_section(DMAD);
    w.count(p.dma.size());
    for (const DmaDesc &d : p.dma) {
        w.i32(d.sticks);
        for (int32_t c : d.count) w.i32(c);
        for (int64_t s : d.dram_stride) w.i64(s);
        for (int32_t s : d.lx_stride) w.i32(s);
    }
    w.end_section(at);

    at = w.begin_section(MMDS);
    w.count(p.mm.size());
    for (const MatmulDesc &d : p.mm) {
        w.i32(d.m);
        w.i32(d.n);
        w.i32(d.k);
        w.i32(d.lda);
        w.i32(d.ldb);
        w.i32(d.ldc);
    }
    w.end_section(at);

    at = w.begin_section(CODE);
    w.count(p.code.size());
    for (const Instr &in : p.code) {
        w.u16(uint16_t(in.op));
        w.u8(in.dtype);
        w.u8(in.mode);
        for (int32_t a : in.a) w.i32(a);
    }
    w.end_section(at);
    return std::move(w.out);
}

DeviceProgram parse_program(const uint8_t *data, size_t size) {
    Reader head(data, 0, size, "header");
    if (size == 0 || data == nullptr) head.fail_at(0, "empty input, not a device program");
    if (std::memcmp(data, kMagic, std::min<size_t>(size, 4)) != 0)
        head.fail_at(0, "not a device program (bad magic, expected 'SPYR')");
    if (size < kHeaderBytes) head.fail_at(0, "truncated: file is ", size, " bytes, the header alone is ", kHeaderBytes);
    head.u32("magic");
    uint32_t version = head.u32("format version");
    if (version != DeviceProgram::kFormatVersion)
        head.fail_at(4, "unsupported format version ", version, " (this reader supports ", DeviceProgram::kFormatVersion,
                     ")");
    size_t at = head.pos();
    uint32_t nsections = head.u32("section count");
    if (uint64_t(nsections) * kSectionHeaderBytes > head.left())
        head.fail_at(at, "section count ", nsections, " does not fit in the ", head.left(), " bytes that follow");

    DeviceProgram p;
    bool seen[kNumSections] = {};
    size_t pos = head.pos();
    for (uint32_t s = 0; s < nsections; s++) {
        Reader sh(data, pos, size, "section header");
        sh.need(kSectionHeaderBytes, pos, "section header");
        const uint8_t *id = data + pos;
        int which = -1;
        for (int k = 0; k < kNumSections; k++)
            if (std::memcmp(id, kSectionIds[k], 4) == 0) which = k;
        if (which < 0) sh.fail_at(pos, "unknown section id '", printable_id(id), "'");
        std::string region = std::string("section ") + kSectionIds[which];
        Reader hdr(data, pos, size, region);
        if (seen[which]) hdr.fail_at(pos, "duplicate section");
        seen[which] = true;
        hdr.u32("section id");
        size_t len_at = hdr.pos();
        uint64_t len = hdr.u64("payload length");
        if (len > hdr.left())
            hdr.fail_at(len_at, "payload length ", len, " exceeds the ", hdr.left(), " bytes left in the file");
        size_t begin = hdr.pos(), end = begin + size_t(len);
        Reader r(data, begin, end, region);
        switch (which) {
        case HEAD: read_head(r, p); break;
        case BUFS: read_bufs(r, p); break;
        case DMAD: read_dmad(r, p); break;
        case MMDS: read_mmds(r, p); break;
        case CODE: read_code(r, p); break;
        }
        r.expect_end();
        pos = end;
    }
    for (int k = 0; k < kNumSections; k++)
        if (!seen[k]) throw_error("section ", kSectionIds[k], " at offset ", pos, ": missing section");
    if (pos != size) throw_error("end of file at offset ", pos, ": ", size - pos, " trailing bytes after the last section");

    for (VerifiedPart part : kVerifiedParts) {
        try {
            verify_program_part(p, part);
        } catch (const Error &e) {
            throw e.reworded(std::string("section ") + kSectionIds[section_of(part)] + ": " + e.what());
        }
    }
    return p;
}

void write_program_file(const DeviceProgram &program, const std::string &path) {
    std::vector<uint8_t> bytes = serialize_program(program);
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) throw_error("cannot open '", path, "' for writing: ", std::strerror(errno));
    size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
    int write_errno = errno;
    bool failed = written != bytes.size() || std::ferror(f);
    if (std::fclose(f) != 0 && !failed) {
        write_errno = errno;
        failed = true;
    }
    if (failed) throw_error("cannot write '", path, "': ", std::strerror(write_errno));
}

DeviceProgram read_program_file(const std::string &path) {
    struct Closer {
        void operator()(std::FILE *f) const { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, Closer> f(std::fopen(path.c_str(), "rb"));
    if (!f) throw_error("cannot open '", path, "' for reading: ", std::strerror(errno));
    // A regular file's size is known up front: refuse an oversized one before reading any of it.
    struct stat st;
    if (fstat(fileno(f.get()), &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) > kMaxFileBytes)
        throw_error("cannot read '", path, "': file is larger than ", kMaxFileBytes, " bytes (1 GiB)");
    // Read in chunks rather than trusting a size from seek: pipes and special files have none.
    std::vector<uint8_t> bytes;
    uint8_t chunk[1 << 16];
    for (;;) {
        size_t n = std::fread(chunk, 1, sizeof chunk, f.get());
        if (n > 0) {
            if (bytes.size() + n > kMaxFileBytes)
                throw_error("cannot read '", path, "': file is larger than ", kMaxFileBytes, " bytes (1 GiB)");
            bytes.insert(bytes.end(), chunk, chunk + n);
        }
        if (n < sizeof chunk) {
            if (std::ferror(f.get())) throw_error("cannot read '", path, "': ", std::strerror(errno));
            break;
        }
    }
    try {
        return parse_program(bytes.data(), bytes.size());
    } catch (const Error &e) {
        throw e.reworded("'" + path + "': " + e.what());
    }
}

}  // namespace spyre
