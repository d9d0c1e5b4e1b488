// AnySchedule: a schedule of any family as the family interface passes it around (family.hpp).
#pragma once

#include <memory>
#include <typeinfo>
#include <utility>

#include "heaplab/core/expects.hpp"

namespace heaplab::runner {

class Family;

/// A schedule of some family: an immutable value, cheap to copy (shared).
class AnySchedule {
 public:
  AnySchedule() = default;
  template <class S>
  AnySchedule(Family const& family, S schedule)
      : family_(&family),
        value_(std::make_shared<S const>(std::move(schedule))),
        type_(&typeid(S)) {}

  [[nodiscard]] bool empty() const { return !value_; }
  [[nodiscard]] Family const& family() const {
    HEAPLAB_EXPECTS(family_ != nullptr, "an empty AnySchedule has no family");
    return *family_;
  }
  /// The family's schedule; its type must be S.
  template <class S>
  [[nodiscard]] S const& get() const {
    HEAPLAB_EXPECTS(value_ && *type_ == typeid(S),
                    "AnySchedule::get: the schedule is not of the requested type");
    return *static_cast<S const*>(value_.get());
  }

 private:
  Family const* family_ = nullptr;
  std::shared_ptr<void const> value_;
  std::type_info const* type_ = nullptr;
};

}  // namespace heaplab::runner
