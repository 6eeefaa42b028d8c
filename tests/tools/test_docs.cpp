// README.md and docs/: the README stays short (what this is, the two commands, the tour, where to
// read on) and free of commit hashes (history is the commit log's); its docs table lists every
// docs/*.md, design.md first; and the tour's table is what spyre-tour prints.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_paths.h"
#include "tool_test_util.h"

namespace fs = std::filesystem;
using namespace spyre::tools_testing;

namespace {

std::string read_doc(const std::string &relative) {
    std::ifstream in(std::string(SPYRE_SOURCE_DIR) + "/" + relative);
    EXPECT_TRUE(in) << relative << " not found";
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Words of 7 to 40 lowercase hex digits with at least one digit and one letter a-f: what `git log
// --oneline` and `git rev-parse` print. A decimal number (no letter) or a word like "defaced" (no
// digit) is not one.
std::vector<std::string> commit_hashes_in(const std::string &text) {
    std::vector<std::string> found;
    size_t i = 0;
    while (i < text.size()) {
        if (!std::isalnum(static_cast<unsigned char>(text[i]))) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < text.size() && std::isalnum(static_cast<unsigned char>(text[j]))) j++;
        const std::string word = text.substr(i, j - i);
        auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
        auto is_letter = [](char c) { return c >= 'a' && c <= 'f'; };
        const bool hex = std::all_of(word.begin(), word.end(), [&](char c) { return is_digit(c) || is_letter(c); });
        const bool digit = std::any_of(word.begin(), word.end(), is_digit);
        const bool letter = std::any_of(word.begin(), word.end(), is_letter);
        if (word.size() >= 7 && word.size() <= 40 && hex && digit && letter) found.push_back(word);
        i = j;
    }
    return found;
}

TEST(Docs, CommitHashFinderFindsHashesAndNotNumbersOrWords) {
    EXPECT_EQ(commit_hashes_in("took 521 s at b3734be (ctest 169 s)"), std::vector<std::string>{"b3734be"});
    EXPECT_EQ(commit_hashes_in("at 26be57a1c0ffee11223344556677889900aabbcc."),
              std::vector<std::string>{"26be57a1c0ffee11223344556677889900aabbcc"});
    EXPECT_TRUE(commit_hashes_in("1073741824 bytes, a defaced 0x7Eu, 6be57a, sol_frac 0.69").empty());
}

TEST(Docs, ReadmeIsAtMost300LinesWithNoCommitHash) {
    const std::string readme = read_doc("README.md");
    const long lines = std::count(readme.begin(), readme.end(), '\n');
    EXPECT_LE(lines, 300) << "README.md is the two commands, the tour and where to read on; move the rest into docs/";
    for (const std::string &h : commit_hashes_in(readme))
        ADD_FAILURE() << "README.md names a commit (" << h << "): history belongs in the commit log";
}

// The table under "Where to read on" links every docs/*.md, design.md first; each doc exists.
TEST(Docs, ReadmeListsEveryDocDesignFirst) {
    const std::string readme = read_doc("README.md");
    const size_t from = readme.find("## Where to read on");
    ASSERT_NE(from, std::string::npos);
    std::vector<std::string> listed;
    const std::string row = "\n| [`docs/";
    for (size_t at = readme.find(row, from); at != std::string::npos; at = readme.find(row, at + 1)) {
        const size_t name = at + 5, end = readme.find('`', name);
        listed.push_back(readme.substr(name, end - name));
    }
    ASSERT_FALSE(listed.empty());
    EXPECT_EQ(listed.front(), "docs/design.md");
    std::vector<std::string> docs;
    for (const fs::directory_entry &e : fs::directory_iterator(std::string(SPYRE_SOURCE_DIR) + "/docs"))
        if (e.path().extension() == ".md") docs.push_back("docs/" + e.path().filename().string());
    std::sort(docs.begin(), docs.end());
    std::vector<std::string> sorted = listed;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, docs) << "the README's docs table and docs/*.md differ";
}

// Each doc opens with its title and then a paragraph on what it is for, not straight into a section.
TEST(Docs, EveryDocOpensWithWhatItIsFor) {
    for (const fs::directory_entry &e : fs::directory_iterator(std::string(SPYRE_SOURCE_DIR) + "/docs")) {
        if (e.path().extension() != ".md") continue;
        std::istringstream in(read_doc("docs/" + e.path().filename().string()));
        std::string title, blank, first;
        std::getline(in, title);
        std::getline(in, blank);
        std::getline(in, first);
        EXPECT_EQ(title.rfind("# ", 0), 0u) << e.path();
        EXPECT_TRUE(blank.empty()) << e.path();
        EXPECT_FALSE(first.empty() || first[0] == '#' || first[0] == '|' || first.rfind("```", 0) == 0)
            << e.path() << ": its first paragraph should say what the page is for";
    }
}

// The README's tour table is what spyre-tour prints, from its header line on.
TEST(Docs, ReadmeTourTableIsWhatSpyreTourPrints) {
    const std::string readme = read_doc("README.md");
    const std::string begin = "<!-- BEGIN TOUR -->\n```\n", end = "```\n<!-- END TOUR -->";
    const size_t a = readme.find(begin), b = readme.find(end);
    ASSERT_NE(a, std::string::npos);
    ASSERT_NE(b, std::string::npos);
    const std::string quoted = readme.substr(a + begin.size(), b - a - begin.size());
    CommandResult r = run_command(quote(SPYRE_TOUR));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const size_t header = r.output.find("schedule ");
    ASSERT_NE(header, std::string::npos) << r.output;
    EXPECT_EQ(quoted, r.output.substr(header)) << "paste the table build/bin/spyre-tour prints into README.md";
}

}  // namespace
