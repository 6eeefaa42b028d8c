// The model's validity notes (sim/model_validity.h), one small program per note: each note appears
// when the kernel leans on its mechanism outside the calibrated range, and not when the same kernel
// stays inside (fewer rows, more cores, a larger tile). tests/calibration/test_model_validity_points.cpp
// ties the bounds to the calibration suite.
#include <gtest/gtest.h>

#include "sim/model_validity.h"
#include "sim_test_helpers.h"

namespace spyre {
namespace {

using simtest::contains;
using simtest::streaming_copy;
using simtest::StreamSpec;

std::vector<ValidityNote> notes_of(const DeviceProgram &p, const MachineDesc &m = {}) {
    SimOptions opt;
    opt.timing_only = true;
    return model_validity(p, simulate(p, m, {}, opt).stats, m);
}

std::string keys_of(const DeviceProgram &p, const MachineDesc &m = {}) { return validity_keys(notes_of(p, m)); }

// The message of the note `key`, or "" when the run has none.
std::string message_of(const std::vector<ValidityNote> &notes, const std::string &key) {
    for (const ValidityNote &n : notes)
        if (n.key == key) return n.message;
    return "";
}

bool has(const std::string &keys, const std::string &key) {
    return ("," + keys + ",").find("," + key + ",") != std::string::npos;
}

StreamSpec stream(int cores, int64_t chunk, int32_t vector_sticks) {
    StreamSpec s;
    s.cores = cores;
    s.bytes_per_core = 1 << 20;
    s.chunk = chunk;
    s.vector_sticks_per_chunk = vector_sticks;
    return s;
}

// Each core runs `reps` vector instructions `op` over `sticks` sticks of its LX, and nothing else.
DeviceProgram vector_loop(int cores, Opcode op, int reps, int32_t sticks) {
    ProgramBuilder b("vector_loop", cores);
    Reg i = b.alloc();
    b.loop(i, reps);
    if (op == Opcode::VREDSUM) b.vred(op, DType::F16, 0, Lx(0), Lx(4096), sticks);
    else if (op == Opcode::VTRANSPOSE) b.vtranspose(DType::F16, 0, Lx(0), Lx(65536), 64, 64);
    else b.vun(op, DType::F16, 0, Lx(0), Lx(65536), sticks);
    b.end_loop();
    b.wait_tag(0);
    return b.finish();
}

// Each core runs `reps` accumulating MATMULs of m x 256 x 256 from its LX.
DeviceProgram matmul_loop(int cores, int m, int reps) {
    ProgramBuilder b("matmul_loop", cores);
    MatmulDesc d;
    d.m = m, d.n = 256, d.k = 256, d.lda = 256 * 2, d.ldb = 256 * 2, d.ldc = 256 * 4;
    const int desc = b.mm_desc(d);
    Reg i = b.alloc();
    b.loop(i, reps);
    b.matmul(0, Lx(0), Lx(512 << 10), Lx(256 << 10), desc, true);
    b.end_loop();
    b.wait_tag(0);
    return b.finish();
}

// Every core loads the same 512 KiB of one input `reps` times (an operand each core loads itself).
DeviceProgram replicated_loads(int cores, int reps) {
    ProgramBuilder b("replicated", cores);
    const int64_t bytes = 512 << 10;
    const int in = b.buffer("w", BufferKind::Input, DType::F16, {bytes / 2});
    DmaDesc d;
    d.sticks = int32_t(bytes / 128);
    const int desc = b.dma_desc(d);
    Reg i = b.alloc();
    b.loop(i, reps);
    b.dma_ld(0, in, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.end_loop();
    return b.finish();
}

TEST(ModelValidity, StreamingKernelWithLargeTilesOnFourCoresIsInsideTheRange) {
    EXPECT_EQ(keys_of(streaming_copy(stream(4, 256 << 10, 64))), "");
}

TEST(ModelValidity, ShortTilesWithComputeBelow32KiBPerTransfer) {
    const std::vector<ValidityNote> notes = notes_of(streaming_copy(stream(4, 8 << 10, 8)));
    const std::string msg = message_of(notes, "short_tiles");
    EXPECT_TRUE(contains(msg, "8 KiB per core per transfer")) << validity_keys(notes);
    EXPECT_TRUE(contains(msg, "validated from 32 KiB"));
    EXPECT_TRUE(contains(msg, "softmax_tiled/32c/1024x2048/h8"));
    EXPECT_TRUE(contains(msg, "not reproduced: softmax_tiled/32c/256x2048/h2"));
    EXPECT_FALSE(has(keys_of(streaming_copy(stream(4, 32 << 10, 8))), "short_tiles"));
}

// A DMA-only stream is validated down to the stick-plane gather's 8 KiB transfers.
TEST(ModelValidity, ShortTransfersOfADmaOnlyStreamBelow8KiB) {
    const std::vector<ValidityNote> notes = notes_of(streaming_copy(stream(4, 4 << 10, 0)));
    EXPECT_TRUE(contains(message_of(notes, "short_transfers"),
                         "4 KiB per core per transfer (bytes-weighted median, DMA only)"))
        << validity_keys(notes);
    EXPECT_FALSE(has(validity_keys(notes), "short_tiles"));
    EXPECT_EQ(keys_of(streaming_copy(stream(4, 8 << 10, 0))), "");
}

// One 128-byte load beside a 64 KiB-tile stream does not make the kernel's tiles short.
TEST(ModelValidity, StreamingTransferSizeIsTheBytesWeightedMedian) {
    ProgramBuilder b("one_off", 1);
    const int in = b.buffer("x", BufferKind::Input, DType::F16, {4 << 20});
    const int bias = b.buffer("b", BufferKind::Input, DType::F16, {64});
    DmaDesc tile, stick;
    tile.sticks = 512, stick.sticks = 1;
    const int d_tile = b.dma_desc(tile), d_stick = b.dma_desc(stick);
    b.dma_ld(0, bias, kZero, 0, Lx(0), d_stick);
    for (int t = 0; t < 2; t++) b.dma_ld(0, in, kZero, t * (64 << 10), Lx(4096), d_tile);
    b.wait_tag(0);
    const DeviceProgram p = b.finish();
    EXPECT_EQ(streaming_transfer_bytes(p, MachineDesc{}), 64 << 10);
    EXPECT_EQ(streaming_transfer_bytes(vector_loop(1, Opcode::VEXP, 1, 1), MachineDesc{}), 0);
}

// Lane reductions are calibrated on 1-4 cores and on 32; IBM's 8 and 16 are not reproduced.
TEST(ModelValidity, ReductionBoundKernelOnEightCoresIsOutsideTheReductionRange) {
    const std::vector<ValidityNote> notes = notes_of(vector_loop(8, Opcode::VREDSUM, 64, 256));
    const std::string msg = message_of(notes, "lane_reduce_cores");
    EXPECT_TRUE(contains(msg, "of the run on 8 cores")) << validity_keys(notes);
    EXPECT_TRUE(contains(msg, "validated on 1-4 and 32 cores"));
    EXPECT_TRUE(contains(msg, "reduce_rows/4c/4096x4096"));
    EXPECT_FALSE(has(validity_keys(notes), "vector_rates")) << "lane reductions are calibrated, not assumed";
    for (int cores : {4, 32}) EXPECT_EQ(keys_of(vector_loop(cores, Opcode::VREDSUM, 64, 256)), "") << cores;
}

TEST(ModelValidity, KernelBusyOnOtherVectorOpsRestsOnAssumedRates) {
    const std::vector<ValidityNote> notes = notes_of(vector_loop(4, Opcode::VEXP, 64, 256));
    EXPECT_TRUE(contains(message_of(notes, "vector_rates"), "busy 100% of the run on ops other than lane reductions"))
        << validity_keys(notes);
    EXPECT_TRUE(contains(message_of(notes, "vector_rates"), "from 70% of the run"));
    EXPECT_TRUE(contains(message_of(notes, "vector_rates"), "softmax_table/1c/512x1024/stage4"));
}

TEST(ModelValidity, MatmulsOfFewerThanEightRowsAreBelowThePeFillSweep) {
    const std::vector<ValidityNote> notes = notes_of(matmul_loop(8, 4, 64));
    const std::string msg = message_of(notes, "pe_short_rows");
    EXPECT_TRUE(contains(msg, "MATMULs of 4 rows take")) << validity_keys(notes);
    EXPECT_TRUE(contains(msg, "validated from 8 rows per MATMUL (pe_matmul/8c/m8xn256xk256"));
    EXPECT_EQ(keys_of(matmul_loop(8, 8, 64)), "");
}

TEST(ModelValidity, PeBoundKernelOnFewerThanFourCoresIsOutsideThePeRange) {
    EXPECT_TRUE(contains(message_of(notes_of(matmul_loop(2, 64, 64)), "pe_cores"),
                         "on 2 cores: the PE rate is validated on 4-32 cores"));
    EXPECT_EQ(keys_of(matmul_loop(4, 64, 64)), "");
}

// One core's DMA is calibrated by the single-core softmax (stage 4): a one-core stream needs no note.
TEST(ModelValidity, DmaBoundKernelOnOneCoreIsInsideTheDmaRange) {
    EXPECT_EQ(keys_of(streaming_copy(stream(1, 256 << 10, 0))), "");
    EXPECT_EQ(keys_of(streaming_copy(stream(2, 256 << 10, 0))), "");
}

TEST(ModelValidity, ReplicatedReadsOnTwoCoresAreBelowTheMeasuredCoreCounts) {
    const std::vector<ValidityNote> notes = notes_of(replicated_loads(2, 4));
    EXPECT_TRUE(contains(message_of(notes, "replicated_reads"), "of the run on 2 cores")) << validity_keys(notes);
    EXPECT_TRUE(contains(message_of(notes, "replicated_reads"), "replicated_load/32c/1MiB"));
    EXPECT_FALSE(has(keys_of(replicated_loads(4, 4)), "replicated_reads"));
}

TEST(ModelValidity, RingTrafficIsNotedWithItsBytes) {
    ProgramBuilder b("ring", 4);
    b.ring_send(0, 1, Lx(0), 16);
    b.ring_recv(1, -1, Lx(4096), 16);
    b.wait(0x3);
    const std::vector<ValidityNote> notes = notes_of(b.finish());
    EXPECT_TRUE(contains(message_of(notes, "ring"), "8 KiB over the ring: no calibration point moves ring traffic"))
        << validity_keys(notes);
    EXPECT_FALSE(has(keys_of(streaming_copy(stream(4, 256 << 10, 0))), "ring"));
}

TEST(ModelValidity, VtransposeIsNotedAsTheUnreproducedRestickify) {
    const std::vector<ValidityNote> notes = notes_of(vector_loop(32, Opcode::VTRANSPOSE, 2, 0));
    const std::string msg = message_of(notes, "vtranspose");
    EXPECT_TRUE(contains(msg, "through VTRANSPOSE")) << validity_keys(notes);
    EXPECT_TRUE(contains(msg, "not reproduced: restickify/32c/4096x4096"));
}

TEST(ModelValidity, MoreCoresThanAnyCalibrationPointRanOn) {
    MachineDesc m;
    m.cores = 64;
    const std::vector<ValidityNote> notes = notes_of(streaming_copy(stream(64, 256 << 10, 0)), m);
    EXPECT_TRUE(contains(message_of(notes, "cores"), "64 cores: every calibration point ran on at most 32 cores"))
        << validity_keys(notes);
}

TEST(ModelValidity, NotesComeInTableOrderAndKeysJoin) {
    // A 1 KiB operand both cores load, then pass round the ring: three notes.
    ProgramBuilder b("three", 2);
    const int in = b.buffer("x", BufferKind::Input, DType::F16, {4 << 10});
    DmaDesc d;
    d.sticks = 8;
    const int desc = b.dma_desc(d);
    b.dma_ld(0, in, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.ring_send(1, 1, Lx(0), 8);
    b.ring_recv(2, -1, Lx(4096), 8);
    b.wait(0x6);
    const std::vector<ValidityNote> notes = notes_of(b.finish());
    EXPECT_EQ(validity_keys(notes), "short_transfers,replicated_reads,ring");
    EXPECT_EQ(validity_keys(notes, " "), "short_transfers replicated_reads ring");
    EXPECT_EQ(validity_keys({}), "");
}

TEST(ModelValidity, EveryBoundHasAKeyAValidatedRangeAndAnUnknownKeyIsRefused) {
    for (const ValidityBound &b : validity_bounds()) {
        EXPECT_FALSE(std::string(b.key).empty());
        EXPECT_FALSE(std::string(b.validated).empty()) << b.key;
        EXPECT_EQ(&validity_bound(b.key), &b);
    }
    EXPECT_TRUE(contains(simtest::error_of([] { validity_bound("short_tile"); }), "no bound named 'short_tile'"));
}

}  // namespace
}  // namespace spyre
