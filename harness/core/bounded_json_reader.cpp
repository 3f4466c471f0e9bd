#include "harness/core/bounded_json_reader.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <system_error>
#include <vector>

#include "harness/core/errors.h"

namespace collfuzz {

using nlohmann::json;

namespace {

// Thrown through nlohmann's parser when a limit stops the input.
struct SourceStopped {};

// The bytes being parsed, from memory or from a stream, handed to nlohmann one at a time through
// ByteIterator. As soon as a limit is passed it remembers which and throws SourceStopped, so the
// limits hold while reading, before anything past them is buffered.
class ByteSource {
 public:
  enum class Stop { kNone, kTooLarge, kTokenTooLong, kReadError };

  ByteSource(std::string_view text, const JsonLimits& limits) : view_(text), limits_(limits) {}
  ByteSource(std::FILE* file, const JsonLimits& limits)
      : file_(file), buffer_(std::make_unique<std::array<char, 1 << 16>>()), limits_(limits) {}

  // Throws SourceStopped, rather than returning true, when a limit stops the input: nlohmann then
  // never sees the cut (its own error would copy the whole cut token into its message).
  bool at_end() {
    if (stop_ != Stop::kNone) throw SourceStopped{};
    if (pos_ == view_.size() && !refill()) {
      if (stop_ != Stop::kNone) throw SourceStopped{};
      return true;
    }
    if (consumed_ >= limits_.max_bytes) {
      stop_ = Stop::kTooLarge;  // there is a byte past the limit
      throw SourceStopped{};
    }
    // The longest token the limits allow is a string of max_string_bytes (as written) with its
    // quotes; a longer run without a SAX event is refused before the lexer buffers more of it.
    if (token_bytes_ > limits_.max_string_bytes + 2) {
      stop_ = Stop::kTokenTooLong;
      throw SourceStopped{};
    }
    return false;
  }
  char peek() const { return view_[pos_]; }
  void advance() {
    ++pos_;
    ++consumed_;
    ++token_bytes_;
  }
  // A SAX event: the bytes read so far belong to complete tokens.
  void token_done() { token_bytes_ = 0; }

  Stop stop() const { return stop_; }
  std::int64_t consumed() const { return consumed_; }

 private:
  bool refill() {
    if (!file_) return false;
    const std::size_t n = std::fread(buffer_->data(), 1, buffer_->size(), file_);
    if (n == 0) {
      if (std::ferror(file_)) stop_ = Stop::kReadError;
      return false;
    }
    view_ = std::string_view(buffer_->data(), n);
    pos_ = 0;
    return true;
  }

  std::string_view view_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<std::array<char, 1 << 16>> buffer_;
  std::size_t pos_ = 0;
  std::int64_t consumed_ = 0;
  std::int64_t token_bytes_ = 0;
  Stop stop_ = Stop::kNone;
  const JsonLimits& limits_;
};

// An input iterator over a ByteSource; a default-constructed one is the end.
class ByteIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;

  ByteIterator() = default;
  explicit ByteIterator(ByteSource* source) : source_(source) {}

  char operator*() const { return source_->peek(); }
  ByteIterator& operator++() {
    source_->advance();
    return *this;
  }
  ByteIterator operator++(int) {
    ByteIterator old = *this;
    source_->advance();
    return old;
  }
  friend bool operator==(const ByteIterator& a, const ByteIterator& b) {
    return a.done() == b.done();
  }
  friend bool operator!=(const ByteIterator& a, const ByteIterator& b) { return !(a == b); }

 private:
  bool done() const { return !source_ || source_->at_end(); }
  ByteSource* source_ = nullptr;
};

std::string shortened(const std::string& s, std::size_t max = 200) {
  if (s.size() <= max) return s;
  return s.substr(0, max) + "... (" + std::to_string(s.size()) + " characters)";
}

// Builds the DOM from SAX events, the way nlohmann's json_sax_dom_parser does, while counting
// depth and elements, checking strings and keys, and knowing the JSON path of where it is.
class BoundedDomBuilder {
 public:
  BoundedDomBuilder(json& root, ByteSource& source, const std::string& name,
                    const JsonLimits& limits)
      : root_(root), source_(source), name_(name), limits_(limits) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(json::number_integer_t v) { return add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
  bool number_float(json::number_float_t v, const std::string& /*text*/) { return add(json(v)); }
  bool string(std::string& v) {
    check_string(v, "string");
    return add(json(std::move(v)));
  }
  bool binary(json::binary_t& /*v*/) {
    fail(path(), "binary values are not JSON");  // unreachable for JSON text
  }

  bool start_object(std::size_t /*len*/) { return open(json::value_t::object); }
  bool start_array(std::size_t /*len*/) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& k) {
    source_.token_done();
    check_string(k, "key");
    Frame& f = stack_.back();
    auto& object = *f.value->get_ptr<json::object_t*>();
    f.key = k;
    f.has_key = true;
    if (object.count(k)) {
      fail(path(), "duplicate key \"" + shortened(k, 64) +
                       "\" (a key may appear once in an object; nlohmann would keep the last)");
    }
    slot_ = &object[k];
    return true;
  }

  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& last_token, const Exception& e) {
    check_source();
    if (e.id == 406) {  // nlohmann's "number overflow": beyond a double
      fail(path(), "the number " + shortened(last_token, 40) +
                       " is out of range (collfuzz reads integers of at most 64 bits and "
                       "finite doubles)");
    }
    if (source_.consumed() == 0) fail(name_.empty() ? "$" : name_, "empty input: expected JSON");
    fail(path(), "malformed JSON: " + shortened(e.what(), 300));
  }

  // The limits that stop the input, not a SAX event: nlohmann then sees the end of the input,
  // complete or not.
  void check_source() const {
    switch (source_.stop()) {
      case ByteSource::Stop::kNone:
        return;
      case ByteSource::Stop::kTooLarge:
        fail(name_.empty() ? "$" : name_, "the input is larger than the limit of " +
                                              std::to_string(limits_.max_bytes) + " bytes");
      case ByteSource::Stop::kTokenTooLong:
        fail(path(), "a string or number (or a run of whitespace) is longer than the limit of " +
                         std::to_string(limits_.max_string_bytes) + " bytes");
      case ByteSource::Stop::kReadError:
        fail(name_.empty() ? "$" : name_, std::string("read error: ") + std::strerror(errno));
    }
  }

 private:
  struct Frame {
    json* value = nullptr;
    std::size_t next_index = 0;  // arrays: the index of the element being read
    std::string key;             // objects: the key of the member being read
    bool has_key = false;
  };

  // The JSON path of the value being read, with the source's name in front.
  std::string path() const {
    std::string p = name_.empty() ? "$" : name_ + ":$";
    for (const Frame& f : stack_) {
      if (f.value->is_array()) {
        p += "[" + std::to_string(f.next_index) + "]";
      } else if (f.has_key) {
        p += "." + shortened(f.key, 64);
      }
    }
    return p;
  }

  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw InputError(where, message);
  }

  void check_string(const std::string& s, const char* what) const {
    if (static_cast<std::int64_t>(s.size()) > limits_.max_string_bytes) {
      fail(path(), std::string("a ") + what + " of " + std::to_string(s.size()) +
                       " bytes is longer than the limit of " +
                       std::to_string(limits_.max_string_bytes) + " bytes");
    }
  }

  // Places `v` where the next value goes; returns where it now is.
  json* place(json&& v) {
    source_.token_done();
    if (++elements_ > limits_.max_elements) {
      fail(path(), "more than " + std::to_string(limits_.max_elements) +
                       " JSON values (the reader's limit)");
    }
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.value->is_array()) {
      auto& array = *f.value->get_ptr<json::array_t*>();
      array.push_back(std::move(v));
      return &array.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  void done_with_value() {
    if (!stack_.empty()) {
      Frame& f = stack_.back();
      if (f.value->is_array()) ++f.next_index;
      f.has_key = false;
    }
  }

  bool add(json&& v) {
    place(std::move(v));
    done_with_value();
    return true;
  }

  bool open(json::value_t type) {
    if (static_cast<int>(stack_.size()) >= limits_.max_depth) {
      fail(path(), "JSON nested more than " + std::to_string(limits_.max_depth) + " levels deep");
    }
    json* v = place(json(type));
    Frame f;
    f.value = v;
    stack_.push_back(std::move(f));
    return true;
  }

  bool close() {
    source_.token_done();
    stack_.pop_back();
    done_with_value();
    return true;
  }

  json& root_;
  ByteSource& source_;
  const std::string& name_;
  const JsonLimits& limits_;
  std::vector<Frame> stack_;
  json* slot_ = nullptr;  // objects: where the value of the last key goes
  std::int64_t elements_ = 0;
};

json parse_source(ByteSource& source, const std::string& name, const JsonLimits& limits) {
  json root;
  BoundedDomBuilder builder(root, source, name, limits);
  bool ok = false;
  try {
    ok = json::sax_parse(ByteIterator(&source), ByteIterator(), &builder,
                         json::input_format_t::json, /*strict=*/true, /*ignore_comments=*/false);
  } catch (const SourceStopped&) {
    builder.check_source();  // throws the InputError of the limit that stopped the input
  }
  if (!ok) throw InputError(name.empty() ? "$" : name, "malformed JSON");
  return root;
}

}  // namespace

json parse_json_bounded(std::string_view text, const std::string& source,
                        const JsonLimits& limits) {
  ByteSource bytes(text, limits);
  return parse_source(bytes, source, limits);
}

json parse_json_stream(std::FILE* in, const std::string& source, const JsonLimits& limits) {
  ByteSource bytes(in, limits);
  return parse_source(bytes, source, limits);
}

json load_json_file(const std::filesystem::path& file, const JsonLimits& limits) {
  const std::string name = file.string();
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec) throw InputError(name, "cannot read the file: " + ec.message());
  if (std::filesystem::is_directory(status)) {
    throw InputError(name, "is a directory, not a JSON file");
  }
  if (std::filesystem::is_regular_file(status)) {
    const auto size = std::filesystem::file_size(file, ec);
    if (!ec && size > static_cast<std::uintmax_t>(limits.max_bytes)) {
      throw InputError(name, "the file is " + std::to_string(size) +
                                 " bytes, larger than the limit of " +
                                 std::to_string(limits.max_bytes) + " bytes");
    }
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(name.c_str(), "rb"),
                                                           &std::fclose);
  if (!in) throw InputError(name, std::string("cannot open the file: ") + std::strerror(errno));
  return parse_json_stream(in.get(), name, limits);
}

}  // namespace collfuzz
