// Device programs run one after another as one program: each part's work in turn on the same
// cores, every part's transfers waited for and the cores met at a barrier before the next begins.
// The compiler uses it to put a restickify of an argument before the kernel that reads it
// (dsl/restickify_arguments.h). Parts keep their code, descriptors and LX use; their buffers are
// mapped into the joined program's table.
#pragma once

#include <string>
#include <vector>

#include "program.h"

namespace spyre {

struct ProgramPart {
    const DeviceProgram *program = nullptr;
    std::vector<int> buffer_map;  // the part's buffer i is the joined program's buffer_map[i]
};

// The program runs on the most cores of any part; a part on fewer runs on the first of them, the
// others meeting its top-level barriers only. Throws spyre::Error when a map does not cover a
// part's buffers with indices of `buffers`, or a part on fewer cores has a barrier in a loop.
DeviceProgram sequence_programs(const std::string &kernel_name, std::vector<BufferDecl> buffers,
                                const std::vector<ProgramPart> &parts);

}  // namespace spyre
