#include "gates/pipeline/safety/lease_fence.h"

namespace fabgate::pipeline {

void LeaseFence::arm(std::int64_t lease, Duration ttl, Duration margin, Clock::time_point sent) {
  std::lock_guard lock(mutex_);
  armed_ = true;
  lease_ = lease;
  ttl_ = ttl;
  margin_ = std::min(margin, ttl / 2);
  last_sent_ = sent;
  last_renewed_at_ = now_utc();
}

void LeaseFence::renewed(Clock::time_point sent) {
  std::lock_guard lock(mutex_);
  // A closed fence stays closed; a renewal that answers late never moves the mark back.
  if (!armed_ || why_ || closed_locked(Clock::now()) || sent <= last_sent_) return;
  last_sent_ = sent;
  last_renewed_at_ = now_utc() - std::chrono::duration_cast<Duration>(Clock::now() - sent);
}

void LeaseFence::renewal_failed(const std::string& problem) {
  std::lock_guard lock(mutex_);
  last_problem_ = problem;
}

void LeaseFence::expired(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (!armed_ || why_) return;
  why_ = "the coordination store says lease " + std::to_string(lease_) + " of this run has " +
         "expired (" + why + ")";
  closed_at_ = now_utc();
}

void LeaseFence::disarm() {
  std::lock_guard lock(mutex_);
  (void)closed_locked(Clock::now());  // a fence already past its time records why
  armed_ = false;
}

std::optional<std::string> LeaseFence::closed_locked(Clock::time_point now) const {
  if (why_) return why_;
  if (!armed_ || now < last_sent_ + ttl_ - margin_) return std::nullopt;
  why_ = "lease " + std::to_string(lease_) +
         " of this run in the coordination store was not "
         "renewed within its TTL of " +
         format_duration(ttl_) + " (last renewal sent at " + format_utc(last_renewed_at_) + "; " +
         (last_problem_.empty() ? std::string("no renewal answered since")
                                : "last problem: " + last_problem_) +
         "): other controllers may judge this run dead";
  closed_at_ = now_utc();
  return why_;
}

std::optional<std::string> LeaseFence::closed() const {
  std::lock_guard lock(mutex_);
  return closed_locked(Clock::now());
}

nlohmann::json LeaseFence::to_json() const {
  std::lock_guard lock(mutex_);
  (void)closed_locked(Clock::now());
  nlohmann::json out = {{"lease", lease_},
                        {"ttl", format_duration(ttl_)},
                        {"closes_before_expiry_by", format_duration(margin_)},
                        {"last_renewal_sent_at", format_utc(last_renewed_at_)},
                        {"closed", why_.has_value()}};
  if (why_) {
    out["why"] = *why_;
    out["closed_at"] = format_utc(*closed_at_);
  }
  return out;
}

}  // namespace fabgate::pipeline
