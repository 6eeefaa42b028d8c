// The local search's moves (autoschedule/auto_moves.h): one choice changed, added or dropped; moves
// that cost a lowering go one value at a time along a numeric choice.
#include <gtest/gtest.h>

#include <set>

#include "auto_moves.h"

namespace spyre::autosched {
namespace {

TEST(AutoMovesChoiceDiff, NamesTheOneChoiceChangedAddedOrDropped) {
    auto changed = one_choice_apart("fold cores=4 tile=256 a:inline", "fold cores=4 tile=128 a:inline");
    ASSERT_TRUE(changed);
    EXPECT_EQ(changed->name, "tile");
    EXPECT_EQ(changed->from, "256");
    EXPECT_EQ(changed->to, "128");
    auto added = one_choice_apart("fold tile=256", "fold tile=256 segmented");
    ASSERT_TRUE(added);
    EXPECT_EQ(added->name, "segmented");
    auto dropped = one_choice_apart("fold tile=256 pe", "fold tile=256");
    ASSERT_TRUE(dropped);
    EXPECT_EQ(dropped->name, "pe");
    EXPECT_FALSE(one_choice_apart("fold tile=256", "fold tile=256"));
    EXPECT_FALSE(one_choice_apart("fold cores=4 tile=256", "fold cores=2 tile=128"));
}

// Candidates: 0 is the best (segmented, tile 256); 1..5 segmented at other tiles, each a structure
// of its own; 6 the best's level changed; 7 and 8 unsegmented tiles of a structure lowered already.
const std::vector<std::string> kSummaries = {
    "fold tile=256 segmented a:inline",
    "fold tile=128 segmented a:inline",
    "fold tile=64 segmented a:inline",
    "fold tile=32 segmented a:inline",
    "fold tile=512 segmented a:inline",
    "fold tile=1024 segmented a:inline",
    "fold tile=256 segmented a:iter",
    "fold tile=256 a:inline",
    "fold tile=64 a:inline inputs=x",  // two choices apart: never a move
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
