// The Hugging Face checkpoint reader (apps/llama/safetensors.h, llama_checkpoint.h): config.json
// into a LlamaConfig, F16/BF16/F32 tensors into the model's layout, one file or shards, and every
// bad input refused with a message that names the file, the tensor or field and what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "device/error.h"
#include "llama_checkpoint.h"
#include "safetensors.h"
#include "tiny_checkpoint.h"

namespace spyre::llama {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::TestTensor;

std::string refusal_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const spyre::Error &e) {
        return e.what();
    }
    return "(no error)";
}

// A fresh directory under the temp dir, removed at the end of the test.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string &tag)
        : path(fs::temp_directory_path() / ("spyre_ckpt_" + tag + "_" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
};

const TestTensor &find_tensor(const std::vector<TestTensor> &ts, const std::string &name) {
    for (const TestTensor &t : ts)
        if (t.name == name) return t;
    throw std::runtime_error("no test tensor " + name);
}

// The checkpoint in memory: its config, one file of `tensors`.
LlamaCheckpoint from(const json &config, const std::vector<TestTensor> &tensors) {
    return LlamaCheckpoint::from_memory(config.dump(), {{"model.safetensors", test::safetensors_bytes(tensors)}}, "");
}

TEST(LlamaCheckpoint, ReadsTheConfigAndEveryDtypeIntoTheModelsLayout) {
    TempDir dir("read");
    const std::vector<TestTensor> ts = test::tiny_tensors();
    test::write_checkpoint(dir.path, test::tiny_config(), ts);
    const LlamaCheckpoint ck = LlamaCheckpoint::open(dir.path.string());
    const LlamaConfig &c = ck.config();
    EXPECT_EQ(c.hidden, 128);
    EXPECT_EQ(c.heads, 2);
    EXPECT_EQ(c.kv_heads, 1);
    EXPECT_EQ(c.head_dim, 64);
    EXPECT_EQ(c.intermediate, 256);
    EXPECT_EQ(c.vocab, 256);
    EXPECT_EQ(c.layers, 2);
    EXPECT_FLOAT_EQ(c.rope_theta, 500000.0f);
    EXPECT_FLOAT_EQ(c.rope_factor, 8.0f);
    EXPECT_EQ(c.rope_original_context, 8192);
    EXPECT_EQ(ck.eos_ids(), std::vector<int>{255});

    // BF16 (the embedding): rows of `hidden`, as stored.
    const TestTensor &emb = find_tensor(ts, "model.embed_tokens.weight");
    const std::vector<float> embed = ck.weight("embed");
    ASSERT_EQ(embed.size(), emb.values.size());
    for (size_t i = 0; i < embed.size(); i += 97) EXPECT_EQ(embed[i], test::stored_value("BF16", emb.values[i])) << i;
    // F16 (layer 0) and F32 (layer 1): {q | k | v} columns, w[k * cols + n] = proj[n][k].
    for (int l = 0; l < 2; l++) {
        const std::string p = "model.layers." + std::to_string(l) + ".self_attn.", dt = l == 0 ? "F16" : "F32";
        const std::vector<float> wqkv = ck.weight("L" + std::to_string(l) + ".wqkv");
        const int cols = 128 + 64 + 64;
        ASSERT_EQ(wqkv.size(), size_t(cols) * 128);
        const TestTensor &q = find_tensor(ts, p + "q_proj.weight"), &k = find_tensor(ts, p + "k_proj.weight"),
                         &v = find_tensor(ts, p + "v_proj.weight");
        for (int in : {0, 5, 127}) {
            EXPECT_EQ(wqkv[size_t(in) * cols + 3], test::stored_value(dt, q.values[size_t(3) * 128 + in]));
            EXPECT_EQ(wqkv[size_t(in) * cols + 128 + 7], test::stored_value(dt, k.values[size_t(7) * 128 + in]));
            EXPECT_EQ(wqkv[size_t(in) * cols + 192 + 63], test::stored_value(dt, v.values[size_t(63) * 128 + in]));
        }
        const TestTensor &down = find_tensor(ts, "model.layers." + std::to_string(l) + ".mlp.down_proj.weight");
        const std::vector<float> w2 = ck.weight("L" + std::to_string(l) + ".w2");
        ASSERT_EQ(w2.size(), size_t(128) * 256);
        EXPECT_EQ(w2[size_t(200) * 128 + 9], test::stored_value(dt, down.values[size_t(9) * 256 + 200]));
    }
    const std::vector<float> head = ck.weight("lm_head");
    const TestTensor &lm = find_tensor(ts, "lm_head.weight");
    EXPECT_EQ(head[size_t(100) * 256 + 17], test::stored_value("F16", lm.values[size_t(17) * 128 + 100]));
    EXPECT_EQ(ck.weight("final_norm"), find_tensor(ts, "model.norm.weight").values);
}

TEST(LlamaCheckpoint, ShardsWithAnIndexReadAsOneFileDoesAndTiedEmbeddingsServeAsTheHead) {
    TempDir one("one"), three("three");
    const std::vector<TestTensor> ts = test::tiny_tensors();
    test::write_checkpoint(one.path, test::tiny_config(), ts);
    test::write_checkpoint(three.path, test::tiny_config(), ts, 3);
    const LlamaCheckpoint a = LlamaCheckpoint::open(one.path.string()), b = LlamaCheckpoint::open(three.path.string());
    for (const char *w : {"embed", "L1.wqkv", "L0.w1", "L1.w3", "L0.wo", "L1.ffn_norm", "lm_head"})
        EXPECT_EQ(a.weight(w), b.weight(w)) << w;

    json tied = test::tiny_config();
    tied["tie_word_embeddings"] = true;
    tied["eos_token_id"] = {128001, 128008, 128009};
    std::vector<TestTensor> no_head(ts.begin(), ts.end() - 1);
    const LlamaCheckpoint t = from(tied, no_head);
    EXPECT_EQ(t.eos_ids(), (std::vector<int>{128001, 128008, 128009}));
    const std::vector<float> embed = t.weight("embed"), head = t.weight("lm_head");
    for (int tok : {0, 77, 255})
        for (int k : {0, 64, 127}) EXPECT_EQ(head[size_t(k) * 256 + size_t(tok)], embed[size_t(tok) * 128 + size_t(k)]);
}

TEST(LlamaCheckpoint, RopeScalingLlama3IsReadNoneIsUnscaledAndOthersAreRefused) {
    const std::vector<TestTensor> ts = test::tiny_tensors();
    json c = test::tiny_config();
    c["rope_scaling"]["factor"] = 32.0;
    c["rope_scaling"]["original_max_position_embeddings"] = 4096;
    const LlamaConfig scaled = from(c, ts).config();
    EXPECT_FLOAT_EQ(scaled.rope_factor, 32.0f);
    EXPECT_EQ(scaled.rope_original_context, 4096);
    c["rope_scaling"] = nullptr;
    const LlamaConfig plain = from(c, ts).config();
    const std::vector<double> inv = rope_inverse_frequencies(plain);
    for (size_t i = 0; i < inv.size(); i++)
        EXPECT_DOUBLE_EQ(inv[i], std::pow(500000.0, -2.0 * double(i) / 64)) << "unscaled frequency " << i;
    c["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
    EXPECT_NE(refusal_of([&] { from(c, ts); }).find("rope_scaling type 'yarn'"), std::string::npos)
        << refusal_of([&] { from(c, ts); });
    c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 4.0}, {"high_freq_factor", 1.0},
                         {"original_max_position_embeddings", 8192}};
    EXPECT_NE(refusal_of([&] { from(c, ts); }).find("high_freq_factor"), std::string::npos);
}

// Each bad input and the words its message must hold: what is wrong and where.
TEST(LlamaCheckpointErrors, BadSafetensorsFilesAreRefusedNamingTheFileTensorAndField) {
    const std::vector<TestTensor> ts = test::tiny_tensors();
    const std::string good = test::safetensors_bytes(ts);
    auto file_refusal = [](const std::string &bytes) {
        return refusal_of([&] { SafetensorsFile::from_bytes(bytes, "shard.safetensors"); });
    };
    auto expect_has = [](const std::string &msg, const std::vector<std::string> &words) {
        for (const std::string &w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
    };
    // Shorter than the header length, and a header length past the end.
    expect_has(file_refusal("abc"), {"shard.safetensors", "3 bytes", "header length"});
    std::string past = good;
    past[5] = '\x01';  // N >= 2^40
    expect_has(file_refusal(past), {"shard.safetensors", "header length", "past the end"});
    // Truncated data: the last tensor's data_offsets reach past the end.
    expect_has(file_refusal(good.substr(0, good.size() - 10)),
               {"shard.safetensors", "lm_head.weight", "data_offsets", "truncated"});
    // A header that is not JSON, or not an object.
    auto with_header = [](const std::string &text, const std::string &data = std::string(64, '\0')) {
        std::string out(8, '\0');
        for (int i = 0; i < 8; i++) out[size_t(i)] = char((uint64_t(text.size()) >> (8 * i)) & 0xff);
        return out + text + data;
    };
    expect_has(file_refusal(with_header("{\"a\": ")), {"shard.safetensors", "header", "JSON"});
    expect_has(file_refusal(with_header("[1, 2]")), {"shard.safetensors", "object"});
    // Wrong JSON types and missing fields of an entry.
    expect_has(file_refusal(with_header(R"({"w": {"dtype": 16, "shape": [2], "data_offsets": [0, 4]}})")),
               {"shard.safetensors", "'w'", "dtype", "string"});
    expect_has(file_refusal(with_header(R"({"w": {"dtype": "F16", "shape": [2.5], "data_offsets": [0, 4]}})")),
               {"'w'", "shape"});
    expect_has(file_refusal(with_header(R"({"w": {"dtype": "F16", "shape": [2]}})")), {"'w'", "data_offsets", "missing"});
    expect_has(file_refusal(with_header(R"({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, "4"]}})")),
               {"'w'", "data_offsets"});
    expect_has(file_refusal(with_header(R"({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 4]}})")),
               {"'w'", "dtype 'Q4'"});
    // Offsets out of range, reversed, of the wrong size for the shape, and overlapping.
    expect_has(file_refusal(with_header(R"({"w": {"dtype": "F16", "shape": [64], "data_offsets": [0, 128]}})")),
               {"'w'", "data_offsets", "past the end"});
    expect_has(file_refusal(with_header(R"({"w": {"dtype": "F16", "shape": [2], "data_offsets": [8, 4]}})")),
               {"'w'", "data_offsets"});
    expect_has(file_refusal(with_header(R"({"w": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 12]}})")),
               {"'w'", "F32", "[3, 2]", "24 bytes", "12"});
    expect_has(file_refusal(with_header(
                   R"({"a": {"dtype": "F16", "shape": [8], "data_offsets": [0, 16]}, "b": {"dtype": "F16", "shape": [8], "data_offsets": [8, 24]}})")),
               {"'a'", "'b'", "overlap"});
    expect_has(file_refusal(with_header(
                   R"({"w": {"dtype": "F16", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 4]}})")),
               {"'w'", "shape"});
    // A dtype the model does not read, read.
    const SafetensorsFile ints = SafetensorsFile::from_bytes(
        with_header(R"({"w": {"dtype": "I64", "shape": [2], "data_offsets": [0, 16]}})"), "ints.safetensors");
    expect_has(refusal_of([&] { ints.read_floats("w"); }), {"ints.safetensors", "'w'", "I64", "F16, BF16 or F32"});
    expect_has(refusal_of([&] { ints.read_floats("v"); }), {"ints.safetensors", "'v'"});
    // A file that is not there.
    expect_has(refusal_of([] { SafetensorsFile::open("/nonexistent/x.safetensors"); }), {"/nonexistent/x.safetensors"});
}

TEST(LlamaCheckpointErrors, BadConfigsAndMismatchedTensorsAreRefusedNamingTheFieldAndTensor) {
    const std::vector<TestTensor> ts = test::tiny_tensors();
    auto refusal = [&](const json &config, const std::vector<TestTensor> &tensors) {
        return refusal_of([&] { from(config, tensors); });
    };
    auto expect_has = [](const std::string &msg, const std::vector<std::string> &words) {
        for (const std::string &w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
    };
    auto edited = [](const std::function<void(json &)> &edit) {
        json c = test::tiny_config();
        edit(c);
        return c;
    };
    expect_has(refusal_of([&] {
                   LlamaCheckpoint::from_memory("{\"hidden_size\": ", {{"model.safetensors", test::safetensors_bytes(ts)}}, "");
               }),
               {"config.json", "JSON"});
    expect_has(refusal(edited([](json &c) { c.erase("hidden_size"); }), ts), {"config.json", "hidden_size", "missing"});
    expect_has(refusal(edited([](json &c) { c["hidden_size"] = "128"; }), ts), {"config.json", "hidden_size", "integer", "string"});
    expect_has(refusal(edited([](json &c) { c["num_hidden_layers"] = 2.5; }), ts), {"num_hidden_layers", "integer"});
    expect_has(refusal(edited([](json &c) { c["num_key_value_heads"] = 0; }), ts), {"num_key_value_heads"});
    expect_has(refusal(edited([](json &c) { c["num_key_value_heads"] = 3; }), ts), {"num_attention_heads", "num_key_value_heads"});
    expect_has(refusal(edited([](json &c) { c["rms_norm_eps"] = "tiny"; }), ts), {"rms_norm_eps", "number"});
    expect_has(refusal(edited([](json &c) { c["tie_word_embeddings"] = 1; }), ts), {"tie_word_embeddings", "boolean"});
    expect_has(refusal(edited([](json &c) { c["eos_token_id"] = {1, "2"}; }), ts), {"eos_token_id"});
    expect_has(refusal(edited([](json &c) { c["rope_scaling"] = "llama3"; }), ts), {"rope_scaling", "object"});
    expect_has(refusal(edited([](json &c) { c["rope_scaling"].erase("factor"); }), ts), {"rope_scaling", "factor", "missing"});
    expect_has(refusal(edited([](json &c) { c["model_type"] = "mistral"; }), ts), {"model_type", "mistral"});
    expect_has(refusal(edited([](json &c) { c["attention_bias"] = true; }), ts), {"attention_bias"});
    // A tensor missing, of the wrong shape for the config, of a dtype the model does not read.
    std::vector<TestTensor> missing = ts;
    missing.erase(missing.begin() + 3);  // layer 0's k_proj
    expect_has(refusal(test::tiny_config(), missing), {"model.layers.0.self_attn.k_proj.weight", "missing", "model.safetensors"});
    expect_has(refusal(edited([](json &c) { c["intermediate_size"] = 192; }), ts),
               {"model.layers.0.mlp.gate_proj.weight", "[256, 128]", "[192, 128]", "intermediate_size"});
    std::vector<TestTensor> ints = ts;
    ints[1].dtype = "I32";  // layer 0's input_layernorm, 4-byte elements
    expect_has(refusal(test::tiny_config(), ints), {"model.layers.0.input_layernorm.weight", "I32"});
    // An index naming a shard that is not given, a shard path outside the directory, a bad index.
    const std::string bytes = test::safetensors_bytes(ts);
    expect_has(refusal_of([&] {
                   LlamaCheckpoint::from_memory(test::tiny_config().dump(), {{"a.safetensors", bytes}},
                                                R"({"weight_map": {"model.embed_tokens.weight": "b.safetensors"}})");
               }),
               {"model.safetensors.index.json", "b.safetensors"});
    expect_has(refusal_of([&] { read_safetensors_index(R"({"weight_map": {"w": "../x.safetensors"}})", "index.json"); }),
               {"index.json", "'w'", "../x.safetensors"});
    expect_has(refusal_of([&] { read_safetensors_index(R"({"weight_map": {"w": 3}})", "index.json"); }),
               {"index.json", "'w'", "string"});
    expect_has(refusal_of([&] { read_safetensors_index(R"({"metadata": {}})", "index.json"); }),
               {"index.json", "weight_map"});
    // A directory with neither model.safetensors nor an index.
    TempDir empty("empty");
    test::write_text(empty.path / "config.json", test::tiny_config().dump());
    expect_has(refusal_of([&] { LlamaCheckpoint::open(empty.path.string()); }),
               {"model.safetensors", "model.safetensors.index.json", empty.path.string()});
    // A value that fp16 cannot hold.
    std::vector<TestTensor> big = ts;
    big[1].values[5] = 1e6f;
    expect_has(refusal_of([&] { from(test::tiny_config(), big).weight("L0.attn_norm"); }),
               {"model.layers.0.input_layernorm.weight", "fp16"});
}

}  // namespace
}  // namespace spyre::llama
