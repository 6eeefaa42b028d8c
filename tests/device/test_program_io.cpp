#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "device/error.h"
#include "device/program_builder.h"
#include "device/program_io.h"

using namespace spyre;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

// A small but complete program: two buffers, a DMA and a matmul descriptor, a loop, vector work.
DeviceProgram sample_program() {
    ProgramBuilder b("sample", 2);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {256, 4});
    int y = b.buffer("y", BufferKind::Output, DType::F32, {64, 4, 2}, DeviceLayout{1, {0, 2, 1}});
    int d = b.dma_desc(DmaDesc{4, {4, 1, 1}, {512, 0, 0}, {512, 0, 0}});
    b.mm_desc(MatmulDesc{2, 64, 64, 128, 128, 256});
    Reg c = b.alloc(), i = b.alloc();
    b.core_id(c);
    b.loop(i, 3);
    b.dma_ld(0, x, kZero, 0, Lx(0), d);
    b.wait_tag(0);
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(4096), Lx(0), Lx(0), 4, 4);
    b.wait_tag(1);
    b.end_loop();
    b.li(c, -0x123456789LL);
    b.dma_st(2, y, kZero, 0, Lx(4096), d);
    b.wait(0x5);
    b.barrier();
    return b.finish();
}

// One instruction of every opcode, operands chosen table-driven from op_info so each slot kind is
// exercised with a non-trivial valid value.
DeviceProgram every_opcode_program() {
    DeviceProgram p;
    p.kernel_name = "every_opcode";
    p.num_cores = 4;
    p.buffers.push_back(BufferDecl{"a", BufferKind::Input, DType::F16, {128}, default_layout(1)});
    p.buffers.push_back(BufferDecl{"b", BufferKind::Temp, DType::I32, {32, 3}, default_layout(2)});
    p.dma.push_back(DmaDesc{1, {2, 3, 1}, {256, 1024, 0}, {128, 256, 0}});
    p.mm.push_back(MatmulDesc{1, 64, 64, 128, 128, 256});
    for (int o = 0; o < kNumOpcodes; o++) {
        if (!opcode_valid(o)) continue;  // reserved numbers
        Opcode op = Opcode(o);
        const OpInfo &info = op_info(op);
        Instr in;
        in.op = op;
        for (int s = 0; s < kNumOperands; s++) {
            switch (info.operands[s]) {
            case Operand::None: in.a[s] = 0; break;
            case Operand::RegDst: in.a[s] = 3 + s; break;
            case Operand::RegSrc: in.a[s] = 5 + s; break;
            case Operand::Imm: in.a[s] = -1000 * (s + 1) - o; break;
            case Operand::Count: in.a[s] = 2 + s; break;
            case Operand::CountOpt: in.a[s] = 1; break;
            case Operand::Tag: in.a[s] = o % kNumTags; break;
            case Operand::TagMask: in.a[s] = 0x8001; break;
            case Operand::Buffer: in.a[s] = 1; break;
            case Operand::DmaDesc: in.a[s] = 0; break;
            case Operand::MmDesc: in.a[s] = 0; break;
            case Operand::Dir: in.a[s] = -1; break;
            case Operand::RedOp: in.a[s] = 2; break;
            case Operand::DTypeImm: in.a[s] = int32_t(DType::I32); break;
            case Operand::Fp8Fmt: in.a[s] = int32_t(Fp8Format::E5M2); break;
            }
        }
        bool typed = info.engine == Engine::Vector || op == Opcode::MATMUL || op == Opcode::RING_REDUCE;
        if (typed) in.dtype = uint8_t(o % 2 == 0 || op == Opcode::MATMUL ? DType::F16 : DType::F32);
        if (op == Opcode::VMUL) in.mode = kSrc1Scalar;
        if (op == Opcode::VREDMAX) in.mode = kAccumulate | kDstF32;
        if (op == Opcode::MATMUL) in.mode = kAccumulate;
        if (op == Opcode::VCVTF8) in.dtype = uint8_t(DType::F32), in.a[9] = int32_t(DType::U8);  // an encode
        if (op == Opcode::VSTRIDE) in.a[5] = 3, in.a[6] = -2;  // a first element and an upsample's step
        p.code.push_back(in);
    }
    return p;
}

void expect_same(const DeviceProgram &a, const DeviceProgram &b) {
    EXPECT_EQ(a.kernel_name, b.kernel_name);
    EXPECT_EQ(a.num_cores, b.num_cores);
    ASSERT_EQ(a.buffers.size(), b.buffers.size());
    for (size_t i = 0; i < a.buffers.size(); i++) {
        SCOPED_TRACE("buffer " + std::to_string(i));
        EXPECT_EQ(a.buffers[i].name, b.buffers[i].name);
        EXPECT_EQ(a.buffers[i].kind, b.buffers[i].kind);
        EXPECT_EQ(a.buffers[i].type, b.buffers[i].type);
        EXPECT_EQ(a.buffers[i].shape, b.buffers[i].shape);
        EXPECT_EQ(a.buffers[i].layout.stick_dim, b.buffers[i].layout.stick_dim);
        EXPECT_EQ(a.buffers[i].layout.order, b.buffers[i].layout.order);
    }
    ASSERT_EQ(a.dma.size(), b.dma.size());
    for (size_t i = 0; i < a.dma.size(); i++) {
        SCOPED_TRACE("dma " + std::to_string(i));
        EXPECT_EQ(a.dma[i].sticks, b.dma[i].sticks);
        EXPECT_EQ(a.dma[i].count, b.dma[i].count);
        EXPECT_EQ(a.dma[i].dram_stride, b.dma[i].dram_stride);
        EXPECT_EQ(a.dma[i].lx_stride, b.dma[i].lx_stride);
    }
    ASSERT_EQ(a.mm.size(), b.mm.size());
    for (size_t i = 0; i < a.mm.size(); i++) {
        SCOPED_TRACE("mm " + std::to_string(i));
        EXPECT_EQ(a.mm[i].m, b.mm[i].m);
        EXPECT_EQ(a.mm[i].n, b.mm[i].n);
        EXPECT_EQ(a.mm[i].k, b.mm[i].k);
        EXPECT_EQ(a.mm[i].lda, b.mm[i].lda);
        EXPECT_EQ(a.mm[i].ldb, b.mm[i].ldb);
        EXPECT_EQ(a.mm[i].ldc, b.mm[i].ldc);
    }
    ASSERT_EQ(a.code.size(), b.code.size());
    for (size_t i = 0; i < a.code.size(); i++) {
        SCOPED_TRACE("instruction " + std::to_string(i));
        EXPECT_EQ(a.code[i].op, b.code[i].op);
        EXPECT_EQ(a.code[i].dtype, b.code[i].dtype);
        EXPECT_EQ(a.code[i].mode, b.code[i].mode);
        EXPECT_EQ(a.code[i].a, b.code[i].a);
    }
}

DeviceProgram parse(const std::vector<uint8_t> &bytes) { return parse_program(bytes.data(), bytes.size()); }

// The message of the spyre::Error that parsing throws; fails the test if it does not throw one.
std::string program_parse_error(const std::vector<uint8_t> &bytes) {
    try {
        parse(bytes);
    } catch (const Error &e) {
        return e.what();
    }
    ADD_FAILURE() << "parse succeeded, expected a spyre::Error";
    return "";
}

uint32_t get_u32(const std::vector<uint8_t> &b, size_t at) {
    return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
}
uint64_t get_u64(const std::vector<uint8_t> &b, size_t at) {
    return uint64_t(get_u32(b, at)) | uint64_t(get_u32(b, at + 4)) << 32;
}
void put_u32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) b[at + i] = uint8_t(v >> (8 * i));
}
void put_u64(std::vector<uint8_t> &b, size_t at, uint64_t v) {
    for (int i = 0; i < 8; i++) b[at + i] = uint8_t(v >> (8 * i));
}
void put_u16(std::vector<uint8_t> &b, size_t at, uint16_t v) {
    b[at] = uint8_t(v);
    b[at + 1] = uint8_t(v >> 8);
}

// File offset of the section header with the given id (walks the section table).
size_t section_at(const std::vector<uint8_t> &b, const char *id) {
    size_t pos = 12;
    for (uint32_t s = 0; s < get_u32(b, 8); s++) {
        if (std::memcmp(&b[pos], id, 4) == 0) return pos;
        pos += 12 + size_t(get_u64(b, pos + 4));
    }
    ADD_FAILURE() << "no section " << id;
    return 0;
}
size_t payload_at(const std::vector<uint8_t> &b, const char *id) { return section_at(b, id) + 12; }

std::string at(size_t offset) { return "at offset " + std::to_string(offset) + ":"; }

// --- round trips ---

TEST(ProgramIO, HeaderLayout) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    ASSERT_GE(bytes.size(), 24u);
    EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "SPYR");
    EXPECT_EQ(get_u32(bytes, 4), DeviceProgram::kFormatVersion);
    EXPECT_EQ(get_u32(bytes, 8), 5u);
    EXPECT_EQ(std::string(bytes.begin() + 12, bytes.begin() + 16), "HEAD");
    // HEAD payload: u32 name length + "sample" + i32 cores.
    EXPECT_EQ(get_u64(bytes, 16), 4u + 6u + 4u);
    size_t code = payload_at(bytes, "CODE");
    EXPECT_EQ(get_u32(bytes, code), sample_program().code.size());
    EXPECT_EQ(get_u64(bytes, code - 8), 4 + 44 * sample_program().code.size());
    EXPECT_EQ(code + 4 + 44 * sample_program().code.size(), bytes.size());
}

TEST(ProgramIO, RoundTripSample) {
    DeviceProgram p = sample_program();
    std::vector<uint8_t> bytes = serialize_program(p);
    DeviceProgram q = parse(bytes);
    expect_same(p, q);
    EXPECT_EQ(serialize_program(q), bytes);
}

TEST(ProgramIO, RoundTripEveryOpcode) {
    DeviceProgram p = every_opcode_program();
    int valid = 0;
    for (int o = 0; o < kNumOpcodes; o++) valid += opcode_valid(o);
    ASSERT_EQ(int(p.code.size()), valid);
    std::vector<uint8_t> bytes = serialize_program(p);
    DeviceProgram q = parse(bytes);
    expect_same(p, q);
    for (size_t i = 0; i < q.code.size(); i++) EXPECT_EQ(q.code[i].op, p.code[i].op);
}

TEST(ProgramIO, RoundTripEmptyTables) {
    DeviceProgram p;
    p.kernel_name = "empty";
    std::vector<uint8_t> bytes = serialize_program(p);
    expect_same(p, parse(bytes));
}

TEST(ProgramIO, RoundTripExtremeValues) {
    DeviceProgram p = sample_program();
    p.buffers[0].shape = {int64_t(1) << 20, 1024};  // 2^30 elements of f16: 2^31 bytes, within 2^40
    p.dma[0].dram_stride = {INT64_C(1) << 40, -(INT64_C(1) << 35), 0};
    p.dma[0].lx_stride = {INT32_MIN, INT32_MAX, -1};
    p.code[4].a[2] = INT32_MIN;  // an Imm slot (VADD dst offset)
    expect_same(p, parse(serialize_program(p)));
}

TEST(ProgramIO, FileRoundTrip) {
    DeviceProgram p = every_opcode_program();
    std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_program_io_roundtrip.spyre";
    write_program_file(p, path);
    expect_same(p, read_program_file(path));
    std::remove(path.c_str());
}

// --- file errors ---

TEST(ProgramIO, ReadMissingFileNamesPath) {
    std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_no_such_program.spyre";
    try {
        read_program_file(path);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()), "cannot open '" + path + "' for reading: No such file or directory");
    }
}

TEST(ProgramIO, WriteIntoMissingDirectoryNamesPath) {
    std::string path = ::testing::TempDir() + "no_such_dir/x.spyre";
    try {
        write_program_file(sample_program(), path);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_THAT(e.what(), HasSubstr("cannot open '" + path + "' for writing"));
    }
}

TEST(ProgramIO, ReadDirectoryFails) {
    EXPECT_THROW(read_program_file(::testing::TempDir()), Error);
}

TEST(ProgramIO, ReadCorruptFileNamesPathAndSection) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t code = payload_at(bytes, "CODE");
    put_u16(bytes, code + 4, 999);
    std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_program_io_corrupt.spyre";
    {
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    }
    try {
        read_program_file(path);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_THAT(e.what(), AllOf(HasSubstr("'" + path + "'"), HasSubstr("section CODE " + at(code + 4)),
                                    HasSubstr("unknown opcode 999")));
    }
    std::remove(path.c_str());
}

TEST(ProgramIO, ReadOversizedFileFailsWithoutReading) {
    std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_program_io_huge.spyre";
    std::FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    // A sparse file just over 1 GiB: the size check must reject it before reading.
    ASSERT_EQ(std::fseek(f, (1L << 30), SEEK_SET), 0);
    ASSERT_EQ(std::fputc(0, f), 0);
    std::fclose(f);
    auto t0 = std::chrono::steady_clock::now();
    try {
        read_program_file(path);
        ADD_FAILURE() << "expected an error";
    } catch (const Error &e) {
        EXPECT_THAT(e.what(), AllOf(HasSubstr("'" + path + "'"), HasSubstr("1 GiB")));
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
    std::remove(path.c_str());
}

// --- header and section table rejections ---

TEST(ProgramIO, RejectsEmptyInput) {
    EXPECT_THAT(program_parse_error({}), HasSubstr("header " + at(0)));
    EXPECT_THROW(parse_program(nullptr, 0), Error);
}

TEST(ProgramIO, RejectsBadMagic) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    bytes[1] = 'Q';
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("header " + at(0)), HasSubstr("magic")));
}

TEST(ProgramIO, RejectsUnsupportedVersion) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    put_u32(bytes, 4, DeviceProgram::kFormatVersion + 1);
    EXPECT_THAT(program_parse_error(bytes),
                AllOf(HasSubstr("header " + at(4)),
                      HasSubstr("unsupported format version " + std::to_string(DeviceProgram::kFormatVersion + 1))));
}

TEST(ProgramIO, RejectsSectionCountBeyondFile) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    put_u32(bytes, 8, 0xFFFFFFFFu);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("header " + at(8)), HasSubstr("section count 4294967295")));
}

TEST(ProgramIO, RejectsUnknownSectionId) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t mm = section_at(bytes, "MMDS");
    std::memcpy(&bytes[mm], "MMDX", 4);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section header " + at(mm)), HasSubstr("unknown section id 'MMDX'")));
}

TEST(ProgramIO, RejectsDuplicateSection) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    // Append a second copy of HEAD and count it.
    size_t head = section_at(bytes, "HEAD");
    size_t head_end = head + 12 + size_t(get_u64(bytes, head + 4));
    std::vector<uint8_t> copy(bytes.begin() + long(head), bytes.begin() + long(head_end));
    size_t dup = bytes.size();
    bytes.insert(bytes.end(), copy.begin(), copy.end());
    put_u32(bytes, 8, 6);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section HEAD " + at(dup)), HasSubstr("duplicate section")));
}

TEST(ProgramIO, RejectsMissingSection) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    // Drop the last section (CODE) and the count with it.
    size_t code = section_at(bytes, "CODE");
    bytes.resize(code);
    put_u32(bytes, 8, 4);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section CODE " + at(code)), HasSubstr("missing section")));
}

TEST(ProgramIO, RejectsPayloadLengthBeyondFile) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t dmad = section_at(bytes, "DMAD");
    put_u64(bytes, dmad + 4, uint64_t(1) << 62);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section DMAD " + at(dmad + 4)), HasSubstr("payload length")));
}

TEST(ProgramIO, RejectsTrailingBytesInSection) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t mm = section_at(bytes, "MMDS");
    uint64_t len = get_u64(bytes, mm + 4);
    size_t end = mm + 12 + size_t(len);
    bytes.insert(bytes.begin() + long(end), 0xAB);
    put_u64(bytes, mm + 4, len + 1);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section MMDS " + at(end)), HasSubstr("1 unread bytes at the end of the section")));
}

TEST(ProgramIO, RejectsShortSectionPayload) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    // Shrink HEAD's payload by one byte: num_cores no longer fits inside the section.
    size_t head = section_at(bytes, "HEAD");
    uint64_t len = get_u64(bytes, head + 4);
    bytes.erase(bytes.begin() + long(head + 12 + len - 1));
    put_u64(bytes, head + 4, len - 1);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section HEAD " + at(head + 12 + len - 4)), HasSubstr("num_cores")));
}

TEST(ProgramIO, RejectsTrailingBytesAfterLastSection) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t end = bytes.size();
    bytes.push_back(0);
    bytes.push_back(0);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr(at(end)), HasSubstr("2 trailing bytes after the last section")));
}

// --- field rejections ---

TEST(ProgramIO, RejectsHugeInstructionCountFast) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t code = payload_at(bytes, "CODE");
    put_u32(bytes, code, 0xFFFFFFFFu);
    auto t0 = std::chrono::steady_clock::now();
    std::string msg = program_parse_error(bytes);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
    EXPECT_THAT(msg, AllOf(HasSubstr("section CODE " + at(code)), HasSubstr("instruction count 4294967295")));
}

TEST(ProgramIO, RejectsHugeTableCounts) {
    for (const char *id : {"BUFS", "DMAD", "MMDS"}) {
        std::vector<uint8_t> bytes = serialize_program(sample_program());
        size_t p = payload_at(bytes, id);
        put_u32(bytes, p, 0x7FFFFFFFu);
        EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr(std::string("section ") + id + " " + at(p)),
                                              HasSubstr("count 2147483647")));
    }
}

TEST(ProgramIO, RejectsOverlongString) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t head = payload_at(bytes, "HEAD");
    put_u32(bytes, head, 100000);
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section HEAD " + at(head)), HasSubstr("kernel name length 100000")));
}

TEST(ProgramIO, RejectsStringPastSectionEnd) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t head = payload_at(bytes, "HEAD");
    put_u32(bytes, head, 200);  // within the string bound, beyond HEAD's payload
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section HEAD " + at(head)), HasSubstr("truncated kernel name")));
}

// Offset of buffer 0's kind byte: BUFS payload, u32 count, u32 name length, name "x".
size_t buffer0_kind_at(const std::vector<uint8_t> &bytes) { return payload_at(bytes, "BUFS") + 4 + 4 + 1; }

TEST(ProgramIO, RejectsBadBufferKind) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t k = buffer0_kind_at(bytes);
    bytes[k] = 4;
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section BUFS " + at(k)), HasSubstr("buffer 0: unknown kind 4")));
}

TEST(ProgramIO, RoundTripInOutBuffer) {
    DeviceProgram p = sample_program();
    p.buffers[0].kind = BufferKind::InOut;
    DeviceProgram q = parse(serialize_program(p));
    EXPECT_EQ(q.buffers[0].kind, BufferKind::InOut);
    expect_same(p, q);
}

TEST(ProgramIO, RejectsBadBufferDtype) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t k = buffer0_kind_at(bytes) + 1;
    bytes[k] = 200;
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section BUFS " + at(k)), HasSubstr("buffer 0: unknown dtype 200")));
}

TEST(ProgramIO, RejectsBadBufferRank) {
    for (uint8_t rank : {uint8_t(0), uint8_t(5), uint8_t(255)}) {
        std::vector<uint8_t> bytes = serialize_program(sample_program());
        size_t k = buffer0_kind_at(bytes) + 2;
        bytes[k] = rank;
        EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section BUFS " + at(k)),
                                              HasSubstr("buffer 0: rank " + std::to_string(rank) + " out of range")));
    }
}

TEST(ProgramIO, RejectsLongLayoutOrder) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    // buffer 0: kind, dtype, rank 2, two i64 extents, i32 stick_dim, then the order length.
    size_t k = buffer0_kind_at(bytes) + 3 + 16 + 4;
    ASSERT_EQ(bytes[k], 2);
    bytes[k] = 9;
    EXPECT_THAT(program_parse_error(bytes), AllOf(HasSubstr("section BUFS " + at(k)), HasSubstr("layout order length 9")));
}

TEST(ProgramIO, RejectsUnknownOpcode) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    size_t op = payload_at(bytes, "CODE") + 4 + 44 * 3;
    put_u16(bytes, op, 999);
    EXPECT_THAT(program_parse_error(bytes), HasSubstr("section CODE " + at(op) + " instruction 3: unknown opcode 999"));
}

// A file whose VCVTF8 names an fp8 format this reader does not know.
TEST(ProgramIO, RejectsUnknownFp8Format) {
    ProgramBuilder b("fp8", 1);
    b.vcvtf8(DType::F16, DType::U8, Fp8Format::E5M2, 1, Lx(256), Lx(0), 2);
    b.wait(0x2);
    std::vector<uint8_t> bytes = serialize_program(b.finish());
    // Instruction 0: u16 opcode, u8 dtype, u8 mode, then ten i32 operands; a5 is the format.
    size_t fmt = payload_at(bytes, "CODE") + 4 + 4 + 5 * 4;
    ASSERT_EQ(bytes[fmt], 1);
    bytes[fmt] = 7;
    EXPECT_THAT(program_parse_error(bytes),
                HasSubstr("section CODE: instruction 0 (VCVTF8): operand 5 fp8 format 7 is not one of 0 (e4m3), 1 (e5m2)"));
}

// --- verify_program errors surface with the section name ---

TEST(ProgramIO, VerifyErrorsNameTheSection) {
    {
        DeviceProgram p = sample_program();
        p.code.erase(p.code.begin() + 6);  // the ENDLOOP
        EXPECT_THAT(program_parse_error(serialize_program(p)),
                    HasSubstr("section CODE: instruction 1 (LOOP): block is never closed"));
    }
    {
        DeviceProgram p = sample_program();
        p.buffers[1].name = "x";
        EXPECT_THAT(program_parse_error(serialize_program(p)), HasSubstr("section BUFS: buffer 1 'x': duplicate buffer name"));
    }
    {
        DeviceProgram p = sample_program();
        p.dma[0].sticks = 0;
        EXPECT_THAT(program_parse_error(serialize_program(p)), HasSubstr("section DMAD: dma descriptor 0: sticks 0"));
    }
    {
        DeviceProgram p = sample_program();
        p.mm[0].ldc = 100;
        EXPECT_THAT(program_parse_error(serialize_program(p)), HasSubstr("section MMDS: matmul descriptor 0: ldc 100"));
    }
    {
        DeviceProgram p = sample_program();
        p.num_cores = 0;
        EXPECT_THAT(program_parse_error(serialize_program(p)), HasSubstr("section HEAD: kernel 'sample': num_cores 0"));
    }
}

// --- robustness ---

TEST(ProgramIO, EveryTruncationThrows) {
    std::vector<uint8_t> bytes = serialize_program(sample_program());
    for (size_t n = 0; n < bytes.size(); n++) {
        // A fresh buffer of exactly n bytes, so any overread lands outside the allocation.
        std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + long(n));
        EXPECT_THROW(parse_program(prefix.data(), prefix.size()), Error) << "prefix of " << n << " bytes";
    }
    EXPECT_NO_THROW(parse(bytes));
}

TEST(ProgramIO, RandomBitFlipsParseOrThrow) {
    const std::vector<uint8_t> original = serialize_program(every_opcode_program());
    std::mt19937 rng(20240611u);
    int accepted = 0, rejected = 0;
    for (int iter = 0; iter < 2000; iter++) {
        std::vector<uint8_t> bytes = original;
        int flips = 1 + int(rng() % 4);
        for (int f = 0; f < flips; f++) bytes[rng() % bytes.size()] ^= uint8_t(1u << (rng() % 8));
        try {
            DeviceProgram p = parse(bytes);
            accepted++;
            // Whatever parses must serialize back to the same bytes.
            EXPECT_EQ(serialize_program(p), bytes) << "iteration " << iter;
        } catch (const Error &) {
            rejected++;
        } catch (const std::exception &e) {
            ADD_FAILURE() << "iteration " << iter << ": non-spyre exception " << e.what();
        }
    }
    EXPECT_GT(rejected, 0);
    EXPECT_GT(accepted, 0);
}

TEST(ProgramIO, RandomByteOverwritesParseOrThrow) {
    // Overwrite whole 4-byte words with extreme values: hits counts, lengths and enum fields harder
    // than single bit flips do.
    const std::vector<uint8_t> original = serialize_program(sample_program());
    const uint32_t extremes[] = {0, 1, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFu, 0x10000u, 255};
    std::mt19937 rng(7u);
    for (int iter = 0; iter < 2000; iter++) {
        std::vector<uint8_t> bytes = original;
        size_t pos = rng() % (bytes.size() - 3);
        put_u32(bytes, pos, extremes[rng() % 8]);
        try {
            parse(bytes);
        } catch (const Error &) {
        } catch (const std::exception &e) {
            ADD_FAILURE() << "iteration " << iter << ": non-spyre exception " << e.what();
        }
    }
}

}  // namespace
