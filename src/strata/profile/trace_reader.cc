#include "strata/profile/trace_reader.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "strata/profile/json_stream.h"

namespace strata::profile {
namespace {

// Kineto's categories: current names and the capitalised ones of torch <= 1.9 traces.
enum class Category : uint8_t { kOther, kKernel, kMemcpy, kMemset, kRuntime, kCpuOp };

Category CategoryOf(std::string_view cat) {
  if (cat == "kernel" || cat == "Kernel") return Category::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return Category::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return Category::kMemset;
  if (cat == "cuda_runtime" || cat == "Runtime" || cat == "cuda_driver") return Category::kRuntime;
  // Not gpu_user_annotation: its ProfilerStep#N is the GPU-side copy of the CPU step.
  if (cat == "cpu_op" || cat == "user_annotation" || cat == "Operator") return Category::kCpuOp;
  return Category::kOther;
}

enum class EventKey : uint8_t { kOther, kPh, kCat, kName, kTs, kDur, kArgs };
enum class ArgKey : uint8_t { kOther, kCorrelation, kStream, kDevice, kPgName, kPgDesc, kPgRanks };
enum class TopKey : uint8_t { kOther, kTraceEvents, kDistributedInfo, kDeviceProperties };

EventKey EventKeyOf(std::string_view k) {
  if (k == "ph") return EventKey::kPh;
  if (k == "cat") return EventKey::kCat;
  if (k == "name") return EventKey::kName;
  if (k == "ts") return EventKey::kTs;
  if (k == "dur") return EventKey::kDur;
  if (k == "args") return EventKey::kArgs;
  return EventKey::kOther;
}

ArgKey ArgKeyOf(std::string_view k) {
  if (k == "correlation") return ArgKey::kCorrelation;
  if (k == "stream") return ArgKey::kStream;
  if (k == "device") return ArgKey::kDevice;
  if (k == "Process Group Name") return ArgKey::kPgName;
  if (k == "Process Group Description") return ArgKey::kPgDesc;
  if (k == "Process Group Ranks") return ArgKey::kPgRanks;
  return ArgKey::kOther;
}

// Microseconds (an integer, or a double with a nanosecond fraction) to integer nanoseconds;
// nullopt for values no clock produces (negative durations are checked by the caller).
constexpr double kMaxMicroseconds = 9.0e15;  // 2^63 ns is 9.2e15 us
std::optional<int64_t> UsToNs(double us) {
  if (!std::isfinite(us) || std::fabs(us) > kMaxMicroseconds) return std::nullopt;
  return static_cast<int64_t>(std::llround(us * 1000.0));
}
std::optional<int64_t> UsToNs(int64_t us) {
  if (us > static_cast<int64_t>(kMaxMicroseconds) || us < -static_cast<int64_t>(kMaxMicroseconds))
    return std::nullopt;
  return us * 1000;
}

// The token consumer: a small state machine over the nesting depth; only the fields the
// breakdown uses are kept, everything else is skipped as it streams past.
class TraceSax : public JsonHandler {
 public:
  TraceSax(RankTrace& out, KernelClassifier& classifier) : out_(out), classifier_(classifier) {}

  void Literal() override {}
  void Integer(int64_t v) override { OnNumber(UsToNs(v), v); }
  void Float(double v) override {
    OnNumber(UsToNs(v), std::isfinite(v) && std::fabs(v) < 9e18 ? static_cast<int64_t>(v) : -1);
  }
  void String(std::string_view v) override {
    if (InEventFields()) {
      switch (event_key_) {
        case EventKey::kPh:
          ph_is_complete_ = v == "X";
          break;
        case EventKey::kCat:
          category_ = CategoryOf(v);
          break;
        case EventKey::kName:
          name_.assign(v);
          break;
        default:
          break;
      }
    } else if (InArgs()) {
      switch (arg_key_) {
        case ArgKey::kPgName:
          pg_name_.assign(v);
          break;
        case ArgKey::kPgDesc:
          pg_desc_.assign(v);
          break;
        case ArgKey::kPgRanks:
          pg_ranks_.assign(v);
          break;
        default:
          break;
      }
    } else if (top_key_ == TopKey::kDeviceProperties && depth_ == 3 && key_ == "name" &&
               out_.device.empty()) {
      out_.device = std::string(v);
    }
  }
  void StartObject() override {
    if (depth_ == 0) saw_top_object_ = true;
    if (in_events_ && depth_ == events_depth_ + 1) BeginEvent();
    if (InEventFields() && event_key_ == EventKey::kArgs) in_args_ = true;
    ++depth_;
  }
  void EndObject() override {
    --depth_;
    if (in_args_ && depth_ == events_depth_ + 2) in_args_ = false;
    if (in_event_ && depth_ == events_depth_ + 1) EndEvent();
  }
  void StartArray() override {
    if ((depth_ == 1 && top_key_ == TopKey::kTraceEvents) || depth_ == 0) {
      // {"traceEvents": [...]} as Kineto writes it, or the bare-array form of the format.
      in_events_ = true;
      saw_events_ = true;
      events_depth_ = depth_;
    }
    ++depth_;
  }
  void EndArray() override {
    --depth_;
    if (in_events_ && depth_ == events_depth_) in_events_ = false;
  }
  void Key(std::string_view k) override {
    if (depth_ == 1 && !in_events_) {
      top_key_ = k == "traceEvents"        ? TopKey::kTraceEvents
                 : k == "distributedInfo"  ? TopKey::kDistributedInfo
                 : k == "deviceProperties" ? TopKey::kDeviceProperties
                                           : TopKey::kOther;
    } else if (InEventFields()) {
      event_key_ = EventKeyOf(k);
    } else if (InArgs()) {
      arg_key_ = ArgKeyOf(k);
    } else {
      key_.assign(k);
    }
  }

  bool SawTopObject() const { return saw_top_object_; }
  bool SawEvents() const { return saw_events_; }

 private:
  bool InEventFields() const { return in_event_ && depth_ == events_depth_ + 2; }
  bool InArgs() const { return in_args_ && depth_ == events_depth_ + 3; }

  void OnNumber(std::optional<int64_t> ns, int64_t raw) {
    if (InEventFields()) {
      if (event_key_ == EventKey::kTs) ts_ns_ = ns;
      if (event_key_ == EventKey::kDur) dur_ns_ = ns;
    } else if (InArgs()) {
      if (arg_key_ == ArgKey::kCorrelation) correlation_ = raw;
      if (arg_key_ == ArgKey::kStream) {
        stream_ = static_cast<int32_t>(std::clamp<int64_t>(raw, -1, INT32_MAX));
      }
      if (arg_key_ == ArgKey::kDevice) {
        device_ = static_cast<int16_t>(std::clamp<int64_t>(raw, -1, INT16_MAX));
      }
    } else if (top_key_ == TopKey::kDistributedInfo && depth_ == 2) {
      if (key_ == "rank") out_.rank = raw;
      if (key_ == "world_size") out_.world_size = raw;
    }
  }

  void BeginEvent() {
    in_event_ = true;
    ph_is_complete_ = false;
    category_ = Category::kOther;
    name_.clear();
    ts_ns_.reset();
    dur_ns_.reset();
    correlation_ = -1;
    stream_ = -1;
    device_ = -1;
    pg_name_.clear();
    pg_desc_.clear();
    pg_ranks_.clear();
    event_key_ = EventKey::kOther;
  }

  void EndEvent() {
    in_event_ = false;
    ++out_.events;
    if (!ph_is_complete_ || category_ == Category::kOther) return;
    const bool timed = ts_ns_ && dur_ns_ && *dur_ns_ >= 0;
    switch (category_) {
      case Category::kRuntime:
        if (timed && correlation_ >= 0) out_.launches.emplace_back(correlation_, *ts_ns_);
        return;
      case Category::kCpuOp:
        if (timed && name_.rfind("ProfilerStep#", 0) == 0) {
          const std::string digits = name_.substr(13);
          if (!digits.empty() && digits.size() < 18 &&
              digits.find_first_not_of("0123456789") == std::string::npos) {
            out_.steps.push_back({std::stoll(digits), *ts_ns_, *ts_ns_ + *dur_ns_});
          }
        }
        return;
      default:
        break;
    }
    if (!timed) {
      ++out_.events_without_time;
      return;
    }
    GpuEvent e;
    e.start_ns = *ts_ns_;
    e.end_ns = *ts_ns_ + *dur_ns_;
    e.correlation = correlation_;
    e.stream = stream_;
    e.device = device_;
    e.component = category_ == Category::kMemcpy   ? Component::kMemcpy
                  : category_ == Category::kMemset ? Component::kMemset
                                                   : classifier_.Classify(name_);
    if (e.component == Component::kNccl) e.collective = CollectiveIndex();
    out_.gpu.push_back(e);
  }

  uint16_t CollectiveIndex() {
    std::string kind = NcclKindFromName(name_);
    std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", kind, pg_name_, pg_desc_, pg_ranks_);
    if (auto it = collective_index_.find(key); it != collective_index_.end()) return it->second;
    if (out_.collectives.size() >= UINT16_MAX) return 0;  // absurdly many: pooled as unknown
    const auto index = static_cast<uint16_t>(out_.collectives.size());
    out_.collectives.push_back({std::move(kind), pg_name_, pg_desc_, pg_ranks_});
    collective_index_.emplace(std::move(key), index);
    return index;
  }

  RankTrace& out_;
  KernelClassifier& classifier_;
  int depth_ = 0;
  int events_depth_ = -10;
  bool saw_top_object_ = false;
  bool saw_events_ = false;
  bool in_events_ = false;
  bool in_event_ = false;
  bool in_args_ = false;
  TopKey top_key_ = TopKey::kOther;
  EventKey event_key_ = EventKey::kOther;
  ArgKey arg_key_ = ArgKey::kOther;
  std::string key_;
  // The event being read.
  bool ph_is_complete_ = false;
  Category category_ = Category::kOther;
  std::string name_;
  std::optional<int64_t> ts_ns_;
  std::optional<int64_t> dur_ns_;
  int64_t correlation_ = -1;
  int32_t stream_ = -1;
  int16_t device_ = -1;
  std::string pg_name_, pg_desc_, pg_ranks_;
  std::map<std::string, uint16_t> collective_index_;
};

// Inflates on a second thread so that decompression and parsing overlap (zlib's inflate costs
// about as much CPU as the parse). A few 1 MiB chunks circulate between the threads, so memory
// stays bounded whatever the file's size.
class GzipPipe {
 public:
  explicit GzipPipe(gzFile gz) : gz_(gz), worker_([this] { Produce(); }) {}
  ~GzipPipe() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  GzipPipe(const GzipPipe&) = delete;
  GzipPipe& operator=(const GzipPipe&) = delete;

  int64_t Read(char* out, size_t capacity) {
    if (at_ == current_.size()) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!current_.empty()) free_.push_back(std::move(current_));
      current_.clear();
      at_ = 0;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !full_.empty() || done_; });
      if (full_.empty()) return 0;
      current_ = std::move(full_.front());
      full_.pop_front();
      cv_.notify_all();
    }
    const size_t n = std::min(capacity, current_.size() - at_);
    std::memcpy(out, current_.data() + at_, n);
    at_ += n;
    return static_cast<int64_t>(n);
  }
  std::string Error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;
  static constexpr size_t kDepth = 4;

  void Produce() {
    while (true) {
      std::vector<char> chunk;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || full_.size() < kDepth; });
        if (stop_) return;
        if (!free_.empty()) {
          chunk = std::move(free_.back());
          free_.pop_back();
        }
      }
      chunk.resize(kChunk);
      const int n = gzread(gz_, chunk.data(), static_cast<unsigned>(kChunk));
      std::lock_guard<std::mutex> lock(mu_);
      if (n <= 0) {
        int code = Z_OK;
        const char* text = gzerror(gz_, &code);
        if (code != Z_OK && code != Z_STREAM_END) error_ = text;
        done_ = true;
        cv_.notify_all();
        return;
      }
      chunk.resize(static_cast<size_t>(n));
      full_.push_back(std::move(chunk));
      cv_.notify_all();
    }
  }

  gzFile gz_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> full_;
  std::vector<std::vector<char>> free_;
  std::vector<char> current_;
  size_t at_ = 0;
  bool done_ = false;
  bool stop_ = false;
  std::string error_;
  std::thread worker_;  // last: started once the members it uses exist
};

// The messages EndsBeforeAnyEvent recognises.
constexpr std::string_view kNotJson = "not JSON: ";
constexpr std::string_view kEndsBeforeEvents = "the file ends before its 'traceEvents' array";
constexpr std::string_view kEmpty = "not JSON: byte 0: ";
constexpr std::string_view kEndOfInput = "found the end of the input";

// `read_error` says why the input stopped early when it was not the JSON (zlib: a cut or
// corrupt gzip stream); "" when the bytes ended cleanly.
Result<RankTrace> Parse(const ChunkReader& read, const std::string& file,
                        KernelClassifier& classifier,
                        const std::function<std::string()>& read_error) {
  RankTrace out;
  out.file = file;
  out.collectives.push_back({});
  TraceSax sax(out, classifier);
  const std::optional<JsonStreamError> error = ReadJsonStream(read, sax);
  const std::string gz_error = read_error ? read_error() : "";
  const std::string gz_note = gz_error.empty() ? "" : " (gzip: " + gz_error + ")";
  if (!sax.SawTopObject() && !sax.SawEvents()) {
    return InvalidInput(fmt::format("{}byte {}: {}{}", kNotJson, error ? error->byte : 0,
                                    error ? error->message : "no value", gz_note))
        .InFile(file)
        .WithHint(
            "expected a PyTorch profiler trace (Chrome-trace JSON, plain or .gz) as "
            "written by torch.profiler");
  }
  // An error before the first complete event leaves nothing to read: bad input, not a cut trace.
  if (!sax.SawEvents() || (error && out.events == 0)) {
    return InvalidInput(!error ? "JSON, but not a PyTorch profiler trace: it has no "
                                 "'traceEvents' array"
                        : error->at_end
                            ? fmt::format("{} (byte {}){}", kEndsBeforeEvents, error->byte, gz_note)
                            : fmt::format("malformed JSON at byte {} before any trace event: {}",
                                          error->byte, error->message))
        .InFile(file)
        .WithHint(
            "expected the Chrome-trace JSON that torch.profiler's "
            "export_chrome_trace / tensorboard_trace_handler writes");
  }
  if (error) {
    if (error->at_end) {
      out.cut = fmt::format(
          "the trace ends early at byte {}{} (a profiler stopped while writing?): the {} events "
          "before the cut were read",
          error->byte, gz_note, out.events);
    } else {
      out.cut = fmt::format(
          "malformed JSON at byte {} ({}): the {} events before it were read, the rest of the "
          "file was not",
          error->byte, error->message, out.events);
    }
  }
  std::sort(out.launches.begin(), out.launches.end());
  std::sort(out.steps.begin(), out.steps.end(),
            [](const StepMark& a, const StepMark& b) { return a.start_ns < b.start_ns; });
  return out;
}

}  // namespace

bool EndsBeforeAnyEvent(const Error& e) {
  const std::string_view m = e.message;
  return m.substr(0, kEndsBeforeEvents.size()) == kEndsBeforeEvents ||
         (m.substr(0, kEmpty.size()) == kEmpty && m.find(kEndOfInput) != std::string_view::npos);
}

Result<RankTrace> ReadTraceStream(std::istream& in, const std::string& file,
                                  KernelClassifier& classifier) {
  const ChunkReader read = [&in](char* buffer, size_t capacity) -> int64_t {
    in.read(buffer, static_cast<std::streamsize>(capacity));
    return static_cast<int64_t>(in.gcount());
  };
  return Parse(read, file, classifier, nullptr);
}

Result<RankTrace> ReadTrace(const std::string& path, KernelClassifier& classifier) {
  // Only regular files: a FIFO or a device would block or never end.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return IoError("cannot read: no such file").InFile(path);
  }
  if (!S_ISREG(st.st_mode)) {
    return IoError("not a regular file (a trace is a .json or .json.gz file)").InFile(path);
  }
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return IoError("cannot open for reading").InFile(path);
  gzbuffer(gz, 1 << 20);
  Result<RankTrace> result = [&] {
    GzipPipe pipe(gz);
    const ChunkReader read = [&pipe](char* buffer, size_t capacity) {
      return pipe.Read(buffer, capacity);
    };
    return Parse(read, path, classifier, [&pipe] { return pipe.Error(); });
  }();  // the pipe's thread has stopped here
  gzclose(gz);
  return result;
}

}  // namespace strata::profile
