// out(x, y) = 2 * a(x, y) + b(x, y), fp16: a pipeline the catalogue does not have, with one Spyre
// schedule ("cores2": stick vectorized, rows split over two cores) and the CPU reference ("cpu").
#include "spyre.h"
#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class ScaledAdd : public spyre::gen::SpyreGenerator<ScaledAdd> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};

    Input<Buffer<>> a{"a", Float(16), 2};
    Input<Buffer<>> b{"b", Float(16), 2};
    Output<Buffer<>> out{"out", Float(16), 2};

    void generate() {
        Var x("x"), y("y");
        Func f("scaled_add");
        f(x, y) = cast<float16_t>(2.0f) * a(x, y) + b(x, y);
        out = f;
        apply_schedule(
            info(), spyre::gen::ParamValues{{"cols", cols}, {"rows", rows}}, {a, b}, f, [] {},
            [&](const spyre::MachineDesc &m) {
                if (schedule != "cores2") throw std::runtime_error("scaled_add: unknown schedule " + std::string(schedule));
                spyre::schedule(f, m).stick_vectorize(x).ring_split(y, 2, rows);
            });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i{
        "scaled_add",
        "2 * a + b of two fp16 {cols, rows} tensors (apps/external_example)",
        [] { return std::vector<std::string>{"cores2"}; },
        {},
        [](int64_t c, int64_t r) {
            return std::vector<spyre::gen::BufferShape>{{"a", {c, r}}, {"b", {c, r}}};
        },
        [](int64_t c, int64_t r) { return spyre::gen::BufferShape{"scaled_add", {c, r}}; }};
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(ScaledAdd, scaled_add)
