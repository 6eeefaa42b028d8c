// partition_tails (backend/compiler/partition_tails.h) on hand-built Stmts: the last core's share
// of an uneven split, and a tile loop's partial last tile, become branches of constant bounds, as
// Halide's loop partitioning makes them when the factors are constants; loops whose bounds change
// on every iteration, and splits that divide, stay as they are.
#include <gtest/gtest.h>

#include "Halide.h"
#include "partition_tails.h"

namespace spyre::testing {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// for v in [0, n) (parallel or serial): allocate buf[min(per, rows - v * per)];
//   for y in [0, per): if (v * per + y < rows) buf[y] = 1
Stmt uneven_split(ForType type, int n, int per, int rows) {
    Expr v = Variable::make(Int(32), "v"), y = Variable::make(Int(32), "y");
    Stmt store = Store::make("buf", 1.0f, y, Parameter(), const_true(), ModulusRemainder());
    Stmt row = For::make("y", 0, per, ForType::Serial, DeviceAPI::None, IfThenElse::make(v * per + y < rows, store));
    Stmt alloc = Allocate::make("buf", Float(32), MemoryType::VTCM, {min(per, rows - v * per)}, const_true(), row);
    return For::make("v", 0, n, type, DeviceAPI::None, alloc);
}

struct PartitionTailsFound : IRVisitor {
    std::vector<Expr> extents;  // of every allocation, in order
    int ifs = 0;
    using IRVisitor::visit;
    void visit(const Allocate *op) override {
        extents.push_back(op->extents.at(0));
        IRVisitor::visit(op);
    }
    void visit(const IfThenElse *op) override {
        ifs++;
        IRVisitor::visit(op);
    }
};

PartitionTailsFound found(const Stmt &s) {
    PartitionTailsFound f;
    s.accept(&f);
    return f;
}

TEST(PartitionTails, TheLastCoresShareOfAnUnevenSplitIsABranchOfItsOwn) {
    // 10 rows over 4 cores, 3 each: the last core has 1.
    const Stmt s = partition_tails(uneven_split(ForType::Parallel, 4, 3, 10));
    const For *loop = s.as<For>();
    ASSERT_NE(loop, nullptr) << s;
    EXPECT_TRUE(is_const(loop->extent, 4));
    const IfThenElse *branch = loop->body.as<IfThenElse>();
    ASSERT_NE(branch, nullptr) << s;
    EXPECT_TRUE(equal(branch->condition, Variable::make(Int(32), "v") < 3)) << branch->condition;
    const PartitionTailsFound first = found(branch->then_case), last = found(branch->else_case);
    ASSERT_EQ(first.extents.size(), 1u);
    ASSERT_EQ(last.extents.size(), 1u);
    EXPECT_TRUE(is_const(first.extents[0], 3)) << s;
    EXPECT_TRUE(is_const(last.extents[0], 1)) << s;
    EXPECT_EQ(first.ifs + last.ifs, 0) << "no row is guarded any more: " << s;
}

TEST(PartitionTails, ATileLoopsPartialLastTileIsPeeled) {
    // 10 rows in tiles of 3: three whole tiles, then one of 1.
    const Stmt s = partition_tails(uneven_split(ForType::Serial, 4, 3, 10));
    const Block *block = s.as<Block>();
    ASSERT_NE(block, nullptr) << s;
    const For *whole = block->first.as<For>();
    ASSERT_NE(whole, nullptr) << s;
    EXPECT_TRUE(is_const(whole->extent, 3)) << s;
    const PartitionTailsFound f = found(s);
    ASSERT_EQ(f.extents.size(), 2u) << s;
    EXPECT_TRUE(is_const(f.extents[0], 3)) << s;
    EXPECT_TRUE(is_const(f.extents[1], 1)) << s;
    EXPECT_EQ(f.ifs, 0) << s;
}

TEST(PartitionTails, ASplitThatDividesStaysAsItIs) {
    // Halide's simplifier has already made 12 rows over 4 cores of 3 constant.
    const Stmt in = simplify(uneven_split(ForType::Parallel, 4, 3, 12));
    EXPECT_TRUE(equal(partition_tails(in), in)) << partition_tails(in);
}

TEST(PartitionTails, ALoopWhoseBoundsChangeOnEveryIterationStaysAsItIs) {
    // A causal mask's key tiles: for jo in [0, 8): for rj in [0, jo): allocate buf[min(jo - rj, 2)].
    Expr jo = Variable::make(Int(32), "jo"), rj = Variable::make(Int(32), "rj");
    Stmt store = Store::make("buf", 1.0f, 0, Parameter(), const_true(), ModulusRemainder());
    Stmt alloc = Allocate::make("buf", Float(32), MemoryType::VTCM, {min(jo - rj, 2)}, const_true(), store);
    const Stmt in = For::make("jo", 0, 8, ForType::Serial, DeviceAPI::None,
                              For::make("rj", 0, jo, ForType::Serial, DeviceAPI::None, alloc));
    EXPECT_TRUE(equal(partition_tails(in), in)) << partition_tails(in);
}

TEST(PartitionTails, ALoopOfTwoIterationsIsLeftAsItIs) {
    // for sqo in [0, 2): for i in [0, sqo * 8): with one earlier iteration, a mask's bound that
    // changes on every iteration would look like a tail's.
    Expr sqo = Variable::make(Int(32), "sqo");
    Stmt store = Store::make("buf", 1.0f, 0, Parameter(), const_true(), ModulusRemainder());
    const Stmt in = For::make("sqo", 0, 2, ForType::Serial, DeviceAPI::None,
                              For::make("i", 0, sqo * 8, ForType::Serial, DeviceAPI::None, store));
    EXPECT_TRUE(equal(partition_tails(in), in)) << partition_tails(in);
}

}  // namespace
}  // namespace spyre::testing
