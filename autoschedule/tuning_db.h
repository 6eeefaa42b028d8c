// The autoscheduler's tuning database: one SQLite file (Debian's libsqlite3) mapping a search's
// fingerprint (auto_fingerprint.h) to its result (tuned_schedule.h), so that schedule=auto on a
// pipeline, shapes, machine and options seen before compiles without searching. Several processes
// may use one file (SQLite locks it; writers wait up to a timeout). Errors name the file.
#pragma once

#include <optional>
#include <string>

struct sqlite3;

namespace spyre::autosched {

class TuningDb {
public:
    // Opens the file, creating it (and its table) if it does not exist.
    explicit TuningDb(const std::string &path);
    ~TuningDb();
    TuningDb(const TuningDb &) = delete;
    TuningDb &operator=(const TuningDb &) = delete;

    // The stored result's JSON text for `key`, if any.
    std::optional<std::string> find(const std::string &key);
    // Stores (or replaces) the result for `key`; `kernel` is a label for people reading the file.
    void store(const std::string &key, const std::string &kernel, const std::string &result_json);
    // Copies every entry of the database file `other` that this one lacks; returns how many.
    int64_t merge(const std::string &other);
    int64_t size();

private:
    void exec(const std::string &sql, const char *what);
    std::string path_;
    sqlite3 *db_ = nullptr;
};

}  // namespace spyre::autosched
