// The local search's moves (autoschedule/auto_moves.h): one choice changed, added or dropped; moves
// that cost a lowering go one value at a time along a numeric choice.
#include <gtest/gtest.h>

#include <set>

#include "auto_moves.h"

namespace spyre::autosched {
namespace {

Choice set(const std::string &name, const std::string &value) { return {name, value, Choice::Form::Setting}; }
Choice place(const std::string &name, const std::string &value) { return {name, value, Choice::Form::Placement}; }
Choice flag(const std::string &name) { return {name, "", Choice::Form::Flag}; }

TEST(AutoMovesChoiceDiff, NamesTheOneChoiceChangedAddedOrDropped) {
    auto changed = one_choice_apart({set("cores", "4"), set("tile", "256"), place("a", "inline")},
                                    {set("cores", "4"), set("tile", "128"), place("a", "inline")});
    ASSERT_TRUE(changed);
    EXPECT_EQ(changed->name, "tile");
    EXPECT_EQ(changed->from, "256");
    EXPECT_EQ(changed->to, "128");
    auto added = one_choice_apart({set("tile", "256")}, {set("tile", "256"), flag("segmented")});
    ASSERT_TRUE(added);
    EXPECT_EQ(added->name, "segmented");
    auto dropped = one_choice_apart({set("tile", "256"), flag("pe")}, {set("tile", "256")});
    ASSERT_TRUE(dropped);
    EXPECT_EQ(dropped->name, "pe");
    EXPECT_FALSE(one_choice_apart({set("tile", "256")}, {set("tile", "256")}));
    EXPECT_FALSE(one_choice_apart({set("cores", "4"), set("tile", "256")}, {set("cores", "2"), set("tile", "128")}));
}

// A nested candidate's summary is one choice, whatever it holds: the summary printed with spaces
// and '=' inside it (pre=(rows cores=4 tile=2)) is not taken apart into choices of the outer one.
TEST(AutoMovesChoiceDiff, ANestedCandidateIsOneChoice) {
    const Choice pre4{"pre", "rows cores=4 tile=2", Choice::Form::Group};
    const Choice pre2{"pre", "rows cores=2 tile=2", Choice::Form::Group};
    auto d = one_choice_apart({set("cores", "8"), pre4}, {set("cores", "8"), pre2});
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "pre");
    EXPECT_EQ(summary_of("matmul", {set("cores", "8"), flag("pe"), pre4}), "matmul cores=8 pe pre=(rows cores=4 tile=2)");
}

// Candidates: 0 is the best (segmented, tile 256); 1..5 segmented at other tiles, each a structure
// of its own; 6 the best's level changed; 7 and 8 unsegmented tiles of a structure lowered already.
std::vector<Choice> fold(const std::string &tile, bool segmented, const std::string &a, bool inputs = false) {
    std::vector<Choice> c = {set("tile", tile)};
    if (segmented) c.push_back(flag("segmented"));
    c.push_back(place("a", a));
    if (inputs) c.push_back(set("inputs", "x"));
    return c;
}
const std::vector<std::vector<Choice>> kSummaries = {
    fold("256", true, "inline"),
    fold("128", true, "inline"),
    fold("64", true, "inline"),
    fold("32", true, "inline"),
    fold("512", true, "inline"),
    fold("1024", true, "inline"),
    fold("256", true, "iter"),
    fold("256", false, "inline"),
    fold("64", false, "inline", true),  // two choices apart: never a move
};
const std::vector<size_t> kAll = {0, 1, 2, 3, 4, 5, 6, 7, 8};

TEST(AutoMovesLocal, AMoveThatCostsALoweringGoesToTheNearestValuesOnly) {
    auto moves = local_moves(
        kSummaries, 0, kAll, [](size_t) { return false; }, [](size_t) { return false; });
    // Tiles 128 and 512 (the nearest below and above), the level change, dropping "segmented".
    EXPECT_EQ(moves, (std::vector<size_t>{1, 4, 6, 7}));
}

TEST(AutoMovesLocal, MovesWithinALoweredStructureGoToEveryValue) {
    auto moves = local_moves(
        kSummaries, 0, kAll, [](size_t) { return false; }, [](size_t) { return true; });
    EXPECT_EQ(moves, (std::vector<size_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(AutoMovesLocal, ANearestValueTimedAlreadyStopsTheClimbThatWay) {
    // Tile 128 was timed (and was not better, or it would be the best): nothing further down.
    const std::set<size_t> timed = {1};
    auto moves = local_moves(
        kSummaries, 0, kAll, [&](size_t i) { return timed.count(i) > 0; }, [](size_t) { return false; });
    EXPECT_EQ(moves, (std::vector<size_t>{4, 6, 7}));
}

}  // namespace
}  // namespace spyre::autosched
