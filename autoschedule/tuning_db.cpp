#include "tuning_db.h"

#include <sqlite3.h>

#include "device/error.h"

namespace spyre::autosched {

namespace {

// A prepared statement, finalized however the call ends.
class Statement {
public:
    Statement(sqlite3 *db, const std::string &sql, const std::string &path) : db_(db) {
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK)
            throw_error("tuning database '", path, "': ", sqlite3_errmsg(db));
    }
    ~Statement() { sqlite3_finalize(st_); }
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;
    sqlite3_stmt *get() { return st_; }
    void bind(int i, const std::string &s) { sqlite3_bind_text(st_, i, s.c_str(), int(s.size()), SQLITE_TRANSIENT); }

private:
    sqlite3 *db_;
    sqlite3_stmt *st_ = nullptr;
};

constexpr int kBusyTimeoutMs = 30000;  // parallel tuning shards writing one file wait their turn

}  // namespace

TuningDb::TuningDb(const std::string &path) : path_(path) {
    if (path.empty()) throw_error("tuning database: empty path");
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
        std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw_error("tuning database '", path, "': cannot open: ", msg);
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    try {
        exec("CREATE TABLE IF NOT EXISTS schedules (fingerprint TEXT PRIMARY KEY, kernel TEXT NOT NULL, "
             "result TEXT NOT NULL)",
             "create its table");
    } catch (...) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
    }
}

TuningDb::~TuningDb() { sqlite3_close(db_); }

void TuningDb::exec(const std::string &sql, const char *what) {
    char *err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errmsg(db_);
        sqlite3_free(err);
        throw_error("tuning database '", path_, "': cannot ", what, ": ", msg);
    }
}

std::optional<std::string> TuningDb::find(const std::string &key) {
    Statement st(db_, "SELECT result FROM schedules WHERE fingerprint = ?1", path_);
    st.bind(1, key);
    const int rc = sqlite3_step(st.get());
    if (rc == SQLITE_DONE) return std::nullopt;
    if (rc != SQLITE_ROW) throw_error("tuning database '", path_, "': cannot read: ", sqlite3_errmsg(db_));
    const unsigned char *text = sqlite3_column_text(st.get(), 0);
    const int n = sqlite3_column_bytes(st.get(), 0);
    if (!text) throw_error("tuning database '", path_, "': entry ", key, " has no result text");
    return std::string(reinterpret_cast<const char *>(text), size_t(n));
}

void TuningDb::store(const std::string &key, const std::string &kernel, const std::string &result_json) {
    Statement st(db_, "INSERT OR REPLACE INTO schedules (fingerprint, kernel, result) VALUES (?1, ?2, ?3)", path_);
    st.bind(1, key);
    st.bind(2, kernel);
    st.bind(3, result_json);
    if (sqlite3_step(st.get()) != SQLITE_DONE)
        throw_error("tuning database '", path_, "': cannot write: ", sqlite3_errmsg(db_));
}

int64_t TuningDb::merge(const std::string &other) {
    const int64_t before = size();
    {
        Statement st(db_, "ATTACH DATABASE ?1 AS other", path_);
        st.bind(1, other);
        if (sqlite3_step(st.get()) != SQLITE_DONE)
            throw_error("tuning database '", path_, "': cannot open '", other, "' to merge: ", sqlite3_errmsg(db_));
    }
    try {
        exec("INSERT OR IGNORE INTO main.schedules (fingerprint, kernel, result) "
             "SELECT fingerprint, kernel, result FROM other.schedules",
             ("merge '" + other + "' (is it a tuning database?)").c_str());
    } catch (...) {
        sqlite3_exec(db_, "DETACH DATABASE other", nullptr, nullptr, nullptr);
        throw;
    }
    exec("DETACH DATABASE other", "detach the merged file");
    return size() - before;
}

int64_t TuningDb::size() {
    Statement st(db_, "SELECT COUNT(*) FROM schedules", path_);
    if (sqlite3_step(st.get()) != SQLITE_ROW) throw_error("tuning database '", path_, "': cannot count: ", sqlite3_errmsg(db_));
    return sqlite3_column_int64(st.get(), 0);
}

}  // namespace spyre::autosched
