// spyre-machine: prints the default machine description (JSON or the Markdown parameter table)
// and checks a machine file, reporting the first problem with the key that causes it.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "device/error.h"
#include "device/machine_desc.h"

int main(int argc, char **argv) {
    CLI::App app{"Show or check a Spyre machine description."};
    std::string path;
    bool markdown = false;
    app.add_option("file", path, "machine description JSON to check and print (default: built-in)");
    app.add_flag("--markdown", markdown, "print the parameter table (key, value, unit, source, doc) as Markdown");
    CLI11_PARSE(app, argc, argv);
    try {
        spyre::MachineDesc m = path.empty() ? spyre::MachineDesc{} : spyre::MachineDesc::from_file(path);
        std::printf("%s", markdown ? spyre::machine_params_markdown(m).c_str() : m.to_json_text().c_str());
    } catch (const spyre::Error &e) {
        std::fprintf(stderr, "spyre-machine: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
