// tighten_extents (backend/compiler/tighten_extents.h) on hand-built Stmts: an allocation's extent
// and an if that the loops around fix become constants (a tile counted min(jo - rj, 1) inside
// rj < jo, as Halide sizes causal attention's scores under kv_chunked's segments); what the loops
// do not fix stays as it is.
#include <gtest/gtest.h>

#include "Halide.h"
#include "tighten_extents.h"

namespace spyre::testing {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// for jo in [0, 8): for rj in [0, jo): allocate buf[min(jo - rj, limit)]; if (rj < jo + slack) store
Stmt segment_nest(int limit, int slack) {
    Expr jo = Variable::make(Int(32), "jo"), rj = Variable::make(Int(32), "rj");
    Stmt store = Store::make("buf", 1.0f, 0, Parameter(), const_true(), ModulusRemainder());
    Stmt guarded = IfThenElse::make(rj < jo + slack, store);
    Stmt alloc = Allocate::make("buf", Float(32), MemoryType::VTCM, {min(jo - rj, limit)}, const_true(), guarded);
    return For::make("jo", 0, 8, ForType::Serial, DeviceAPI::None, For::make("rj", 0, jo, ForType::Serial, DeviceAPI::None, alloc));
}

struct TightenExtentsFound : IRVisitor {
    std::vector<Expr> extents;
    int ifs = 0;
    using IRVisitor::visit;
    void visit(const Allocate *op) override {
        extents = op->extents;
        IRVisitor::visit(op);
    }
    void visit(const IfThenElse *op) override {
        ifs++;
        IRVisitor::visit(op);
    }
};

TEST(TightenExtents, ATileCountedByTheLoopsAroundBecomesItsConstant) {
    TightenExtentsFound f;
    tighten_extents(segment_nest(1, 0)).accept(&f);
    ASSERT_EQ(f.extents.size(), 1u);
    EXPECT_TRUE(is_const(f.extents[0], 1)) << f.extents[0];
    EXPECT_EQ(f.ifs, 0) << "rj < jo holds wherever the inner loop runs";
}

TEST(TightenExtents, WhatTheLoopsDoNotFixStays) {
    TightenExtentsFound f;
    // jo - rj ranges over [1, 7]: min(jo - rj, 2) is 1 or 2; rj < jo - 1 fails at rj = jo - 1.
    tighten_extents(segment_nest(2, -1)).accept(&f);
    ASSERT_EQ(f.extents.size(), 1u);
    EXPECT_FALSE(is_const(f.extents[0])) << f.extents[0];
    EXPECT_EQ(f.ifs, 1);
}

}  // namespace
}  // namespace spyre::testing
