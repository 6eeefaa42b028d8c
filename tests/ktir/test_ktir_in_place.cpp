// In-place updates in imported KTIR: a buffer the kernel both loads and stores is an in-out buffer,
// whose initial contents are an input of the run (never silently zeros) and whose final contents
// are the result; the export writes it as spyre.kind = "inout" and reads it back.
#include <gtest/gtest.h>

#include "device/error.h"
#include "ktir_export.h"
#include "ktir_import.h"
#include "ktir_reader.h"
#include "run_halves.h"
#include "test_paths.h"
#include "ktir_test_util.h"

namespace {

using namespace spyre;
using namespace spyre::ktir_testing;

using ktir_testing::kDir;

TEST(KtirInPlace, ABufferLoadedAndStoredIsInOutAndStartsFromItsGivenContents) {
    DeviceProgram p = ktir::import_ktir_file(kDir + "/add_in_place.ktir", {});
    ASSERT_EQ(p.buffers.size(), 2u);
    EXPECT_EQ(p.buffers[0].kind, BufferKind::InOut);
    EXPECT_EQ(p.buffers[1].kind, BufferKind::Input);
    Halves x = random_halves(4 * 64, 3), y = random_halves(4 * 64, 4);
    std::map<std::string, Halves> out = run(p, {{"x", x}, {"y", y}});
    for (size_t i = 0; i < x.size(); i++) ASSERT_EQ(out.at("x")[i], add_f16(x[i], y[i])) << i;
    // Without its initial contents the run is refused, not started from zeros.
    try {
        run(p, {{"y", y}});
        FAIL() << "ran without x's initial contents";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("'x' (inout): no initial image given"), std::string::npos) << e.what();
    }
}

TEST(KtirInPlace, SpyreKindInoutIsReadAndWrittenByTheExport) {
    DeviceProgram p = ktir::import_ktir_file(kDir + "/add_in_place.ktir", {});
    std::string text = ktir::export_ktir(p);
    EXPECT_NE(text.find("spyre.kind = \"inout\""), std::string::npos) << text;
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(q.buffers[0].kind, BufferKind::InOut);
}

}  // namespace
