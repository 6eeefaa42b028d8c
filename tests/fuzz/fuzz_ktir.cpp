// libFuzzer: KTIR text from outside. The reader and the importer must reject anything bad with a
// spyre::Error; a kernel they accept must verify, export back to KTIR and import again, and run in
// the simulator (timing-only, and functional when its buffers are small) to a result or an Error,
// within bounded work: never a crash, a sanitizer report or a hang.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_run.h"
#include "device/error.h"
#include "device/program_verify.h"
#include "ktir_export.h"
#include "ktir_import.h"
#include "ktir_reader.h"
#include "sim/simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace spyre;
    if (size > (size_t(1) << 20)) return 0;  // exported kernels run to a few hundred KB
    const std::string text(reinterpret_cast<const char *>(data), size);
    const MachineDesc m;
    DeviceProgram p;
    ktir::ImportOptions o;
    o.machine = m;
    // Scalar arguments get the value 1 (found from the importer's message that asks for them).
    for (int attempt = 0;; attempt++) {
        try {
            p = ktir::import_ktir(ktir::read_ktir(text), o);
            break;
        } catch (const Error &e) {
            const std::string msg = e.what(), key = "; give --arg ";
            size_t at = msg.find(key);
            if (at == std::string::npos || attempt >= 8) return 0;
            size_t eq = msg.find('=', at + key.size());
            if (eq == std::string::npos) return 0;
            o.args[msg.substr(at + key.size(), eq - at - key.size())] = "1";
        }
    }
    verify_program(p);  // the importer only returns verified programs: a throw here is a finding
    verify_for_machine(p, m);
    try {
        std::string again = ktir::export_ktir(p, m);
        ktir::ImportOptions o;
        DeviceProgram q = ktir::import_ktir(ktir::read_ktir(again), o);
        if (q.code.empty() != p.code.empty()) __builtin_trap();
    } catch (const Error &) {
    }
    fuzz::run_both_modes(p, m, int64_t(4) << 20, int64_t(1) << 24);
    return 0;
}
