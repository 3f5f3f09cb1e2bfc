#include "adapters/flows/watch.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <deque>
#include <limits>
#include <optional>

#include "adapters/flows/wire.h"

namespace fabgate::flows {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxFlows = 256;
constexpr milliseconds kMaxDuration{6 * 60 * 60 * 1000};

std::uint64_t steady_ns(Clock::time_point when) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count());
}

// A sample whose fate (answered on time or not) is not known yet.
//
// Its departure is bracketed by two stamps of its own, taken just before and just after its
// send() (not one stamp per tick for all flows: a sampler preempted halfway through a tick
// sent the rest of it late, and billing that to the path read as an outage). Each bound is
// used on the side that keeps a figure honest: an interruption starts at `sent` (never after
// the probe left) and the echo's round trip runs from `left_by` (a send the scheduler held
// back is not a slow path). Kernel transmit stamps (SO_TIMESTAMPING, read from the error
// queue) would narrow the bracket to the driver's hand-off, at the price of a second read per
// probe and a stamp that never comes for a refused send; with both bounds used this way the
// bracket's width only ever errs on the safe side, so plain clock reads are enough.
struct PendingSample {
  std::uint32_t sequence = 0;
  Clock::time_point sent;                    // departure no earlier than this
  Clock::time_point left_by;                 // and no later than this
  std::optional<Clock::time_point> arrived;  // set when answered within the late bound
  bool late = false;                         // answered, but the path took longer than that
};

struct WatchFlow {
  WatchFlow(TimePoint origin, InterruptionTracker::Offset period) : tracker(origin, period) {}

  Fd fd;
  WatchFlowResult result;
  // In send order, one per tick (consecutive sequence numbers); at most a reply timeout's
  // worth, because a sample not answered is judged only once its echo can no longer count.
  std::deque<PendingSample> pending;
  // sequence + 1 of the sample counted as received in each slot: a duplicate echo (or one the
  // network replayed) is counted once. Slots cover the reply timeout, so memory stays bounded
  // however long the watch runs.
  std::vector<std::uint32_t> counted;
  InterruptionTracker tracker;
  std::optional<Clock::time_point> last_sent;  // the sampler's previous send on this flow
};

// Maps the kernel's receive timestamp (CLOCK_REALTIME) onto the steady clock, so an echo's
// arrival is when the host got it rather than when this thread next ran: on a loaded host a
// late wake-up would otherwise read as a late echo.
class ArrivalClock {
 public:
  // The offset between the two clocks from the tightest of a few steady/real/steady readings:
  // a single pair read by a sampler preempted between its two reads is off by the preemption,
  // and every stamp after it would then fall outside its echo's window and back to the late
  // time recv returned, reading a starved sampler as late echoes.
  ArrivalClock() {
    std::int64_t narrowest = std::numeric_limits<std::int64_t>::max();
    for (int attempt = 0; attempt < kCalibrations; ++attempt) {
      const auto before = static_cast<std::int64_t>(steady_ns(Clock::now()));
      timespec real{};
      ::clock_gettime(CLOCK_REALTIME, &real);
      const auto after = static_cast<std::int64_t>(steady_ns(Clock::now()));
      if (after - before >= narrowest) continue;
      narrowest = after - before;
      offset_ns_ = static_cast<std::int64_t>(real.tv_sec) * 1'000'000'000 + real.tv_nsec -
                   (before + (after - before) / 2);
    }
  }

  // `fallback` (the time recv returned) when the stamp is missing or implausible (a wall-clock
  // step during the watch). A stamp a little before `sent` is an echo faster than the clocks'
  // calibration can tell (loopback and veth answer in tens of microseconds): it arrived at once.
  Clock::time_point arrival(const msghdr& header, Clock::time_point sent,
                            Clock::time_point fallback) const {
    for (cmsghdr* c = CMSG_FIRSTHDR(const_cast<msghdr*>(&header)); c != nullptr;
         c = CMSG_NXTHDR(const_cast<msghdr*>(&header), c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
      timespec stamp{};
      std::memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
      const std::int64_t real_ns =
          static_cast<std::int64_t>(stamp.tv_sec) * 1'000'000'000 + stamp.tv_nsec;
      const Clock::time_point at{std::chrono::nanoseconds(real_ns - offset_ns_)};
      if (at >= sent - kCalibrationSlack && at < sent) return sent;
      if (at >= sent && at <= fallback) return at;
    }
    return fallback;
  }

 private:
  static constexpr int kCalibrations = 8;
  static constexpr std::chrono::microseconds kCalibrationSlack{500};
  std::int64_t offset_ns_ = 0;
};

// What the echoes told about the responder, over every flow.
struct ResidenceCount {
  int answered = 0;    // echoes that carried the responder's residence
  int unanswered = 0;  // echoes from a responder that does not report it (an older one)
};

// Reads every echo waiting on the flow's socket. An echo's path time is its round trip less the
// responder's residence (wire.h): what the path took, without the time the responder's process
// sat on it. Echoes whose path time is within the late bound settle their pending sample;
// later ones still count as received (up to the reply timeout) but not as answers: the path
// did not carry them when it should have. A residence longer than the stall bound is the
// responder's stall, recorded as such.
void drain(WatchFlow& flow, const ArrivalClock& clock, std::uint32_t samples_sent,
           milliseconds late_after, milliseconds reply_timeout, Clock::time_point started,
           StallRecorder& stalls, ResidenceCount& residences) {
  using Offset = InterruptionTracker::Offset;
  std::array<std::byte, 512> buffer;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(timespec)) * 2> control;
  while (true) {
    iovec io{buffer.data(), buffer.size()};
    msghdr header{};
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    header.msg_control = control.data();
    header.msg_controllen = control.size();
    ssize_t n = ::recvmsg(flow.fd.get(), &header, 0);
    const auto now = Clock::now();
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      ++flow.result.send_errors;  // ICMP error for an earlier sample; keep sampling
      continue;
    }
    const auto echo = std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(n));
    if (echo.size() != kWatchProbeSize) continue;
    auto message = ProbeMessage::decode(echo.first(ProbeMessage::kSize));
    if (!message || message->sequence >= samples_sent) continue;
    const Clock::time_point sent{std::chrono::nanoseconds(message->sent_ns)};
    if (sent > now) continue;
    // Judged by when the echo arrived, not when it was read: a sampler stalled for longer than
    // the reply timeout finds prompt echoes waiting, and dropping them as too old made lost
    // samples on both sides of the stall, which read as an outage across it.
    const auto arrived = clock.arrival(header, sent, now);
    // Never more than the whole round trip: a responder's clock stepped meanwhile says nothing.
    Clock::duration held{0};
    if (auto residence = read_residence(echo)) {
      ++residences.answered;
      held = std::min<Clock::duration>(std::chrono::nanoseconds(*residence), arrived - sent);
      stalls.held(std::chrono::duration_cast<Offset>(arrived - started),
                  std::chrono::duration_cast<Offset>(held));
    } else {
      ++residences.unanswered;
    }
    if (arrived - sent > reply_timeout) continue;
    auto& slot = flow.counted[message->sequence % flow.counted.size()];
    if (slot == message->sequence + 1) continue;
    slot = message->sequence + 1;
    ++flow.result.received;
    // Pending samples carry consecutive sequence numbers, one per tick.
    PendingSample* pending = nullptr;
    if (!flow.pending.empty() && message->sequence >= flow.pending.front().sequence) {
      const std::size_t index = message->sequence - flow.pending.front().sequence;
      if (index < flow.pending.size()) pending = &flow.pending[index];
    }
    if (pending == nullptr) {
      ++flow.result.late;  // its sample was already judged
    } else if (arrived - pending->left_by - held <= late_after) {
      pending->arrived = arrived;
    } else {
      pending->late = true;
      ++flow.result.late;
    }
  }
}

// Hands every pending sample whose fate is known to the tracker, in send order: answered on
// time, answered late, or not answered within the reply timeout. With `everything`, samples
// still waiting count as not answered (the watch is over). A sample never answered that
// reached the responder while it held probes (its receive buffer full) is no evidence about
// the path: it is left out, so the span shows as one with no probe in it (unobserved, like
// the sampler's lateness) and counted as unjudged.
void settle(WatchFlow& flow, Clock::time_point now, milliseconds reply_timeout, milliseconds reach,
            Clock::time_point started, const StallRecorder& stalls, bool everything) {
  using Offset = InterruptionTracker::Offset;
  while (!flow.pending.empty()) {
    const auto& front = flow.pending.front();
    const auto sent = std::chrono::duration_cast<Offset>(front.sent - started);
    if (front.arrived) {
      flow.tracker.answered_on_time(sent,
                                    std::chrono::duration_cast<Offset>(*front.arrived - started));
    } else if (front.late) {
      flow.tracker.not_on_time(sent);
    } else if (everything || now - front.sent > reply_timeout) {
      if (stalls.inside_hold(sent, std::chrono::duration_cast<Offset>(reach))) {
        ++flow.result.unjudged;
      } else {
        flow.tracker.not_on_time(sent);
      }
    } else {
      return;
    }
    flow.pending.pop_front();
  }
}

}  // namespace

milliseconds sample_period(const WatchOptions& options) {
  return std::max(milliseconds(1), options.interval / kSamplesPerInterval);
}

std::vector<std::string> validate(const WatchOptions& options) {
  std::vector<std::string> problems;
  if (!parse_ipv4(options.target, options.port)) {
    problems.push_back("target '" + options.target + "' is not an IPv4 address");
  }
  if (options.port == 0) problems.push_back("port must be 1-65535");
  if (options.count < 1 || options.count > kMaxFlows) {
    problems.push_back("count must be 1-" + std::to_string(kMaxFlows));
  }
  if (options.interval < milliseconds(10) || options.interval > milliseconds(100)) {
    problems.push_back("interval must be 10ms-100ms (the sampling contract is at most 100 ms)");
  }
  if (options.max_duration <= milliseconds(0) || options.max_duration > kMaxDuration) {
    problems.push_back("max duration must be more than 0 and at most 6h");
  }
  if (options.reply_timeout <= milliseconds(0) || options.reply_timeout > milliseconds(10000)) {
    problems.push_back("reply timeout must be more than 0 and at most 10s");
  }
  if (options.max_interruption < milliseconds(0)) {
    problems.push_back("max interruption must not be negative");
  }
  return problems;
}

namespace {

std::string ms(milliseconds value) {
  return std::to_string(value.count()) + " ms";
}

const char* whose(StallSource by) {
  return by == StallSource::responder ? "the responder's" : "the sampler's";
}

// "longest 25 ms from 2026-12-02T12:00:01.234Z (the sampler's), 3 in all (1 the responder's),
// 60 ms together"
std::string describe(const StallSummary& stalls) {
  return "longest " + ms(stalls.longest->length) + " from " +
         format_utc(stalls.longest->started_at) + " (" + whose(stalls.longest->by) + "), " +
         std::to_string(stalls.count) + " in all (" + std::to_string(stalls.responder_count) +
         " the responder's), " + ms(stalls.total) + " together";
}

}  // namespace

Verdict judge(const std::vector<WatchFlowResult>& flows, const StallSummary& stalls,
              const WatchOptions& options, milliseconds sampled, std::string& reason) {
  const milliseconds allowed = options.max_interruption;
  int answered = 0;
  int over = 0;
  int maybe_over = 0;
  milliseconds worst{0};
  milliseconds worst_possible{0};
  for (const auto& flow : flows) {
    if (flow.received > 0) ++answered;
    if (flow.interruptions.longest) {
      worst = std::max(worst, flow.interruptions.longest->length);
      if (flow.interruptions.longest->length > allowed) ++over;
    }
    if (flow.interruptions.longest_possible) {
      worst_possible = std::max(worst_possible, *flow.interruptions.longest_possible);
      if (*flow.interruptions.longest_possible > allowed) ++maybe_over;
    }
  }
  const std::string of_flows = " of " + std::to_string(flows.size()) + " flows";
  if (answered == 0) {
    reason = "no flow received any reply: the watch never observed a working path";
    return Verdict::no_evidence;
  }
  // Observed: probes that left and were not answered. A stall never makes this figure.
  if (over > 0) {
    reason = std::to_string(over) + of_flows + " interrupted longer than " + ms(allowed) +
             " (longest " + ms(worst) + ")";
    return Verdict::fail;
  }
  if (stalls.longest) {
    const std::string blind = "the watch itself stalled, not the paths (" + describe(stalls) + ")";
    if (maybe_over > 0) {
      reason = std::to_string(maybe_over) + of_flows + " interrupted for up to " +
               ms(worst_possible) +
               " with the spans the watch did not see at its ends, observed at most " + ms(worst) +
               ": cannot tell whether longer than " + ms(allowed) + "; " + blind;
      return Verdict::no_evidence;
    }
    const milliseconds hides = std::max(allowed, options.interval);
    if (stalls.longest->length > hides) {
      reason = "no evidence for " + ms(stalls.longest->length) + " from " +
               format_utc(stalls.longest->started_at) +
               ": an interruption longer than the allowed " + ms(allowed) +
               " could have passed unseen while " + blind;
      return Verdict::no_evidence;
    }
    if (sampled.count() > 0 && static_cast<double>(stalls.total.count()) >
                                   kMaxStalledShare * static_cast<double>(sampled.count())) {
      reason = "no evidence for " + ms(stalls.total) + " of " + ms(sampled) + " sampled: " + blind;
      return Verdict::no_evidence;
    }
  }
  reason = "no flow interrupted longer than " + ms(allowed) + " (longest " + ms(worst) + ")";
  if (stalls.longest)
    reason += "; the watch itself stalled (" + describe(stalls) +
              "), no evidence for those spans, each within the allowed " + ms(allowed);
  return Verdict::pass;
}

Expected<WatchReport, SocketError> run_watch(const WatchOptions& options,
                                             const std::atomic<bool>& stop,
                                             const WatchSampling& on_sampling) {
  auto target = parse_ipv4(options.target, options.port);
  if (!target) {
    return SocketError{SocketFailure::invalid_address,
                       "target '" + options.target + "' is not an IPv4 address"};
  }
  WatchReport report;
  report.options = options;
  report.started_at = now_utc();
  const auto utc_origin = report.started_at;
  const milliseconds period = sample_period(options);
  // An echo slower than one interval means the path did not deliver within the probe's
  // resolution; counting it as an answer would hide the stall it sat through.
  const milliseconds late_after = options.interval;
  const std::size_t ring =
      static_cast<std::size_t>(options.reply_timeout / period) + kSamplesPerInterval + 2;
  // A flow not sent for longer than one interval was not sampled at the watch's resolution:
  // the sampler stalled (its process was not scheduled), which says nothing about the path.
  const milliseconds stall_after = options.interval;
  const auto stall_after_offset =
      std::chrono::duration_cast<InterruptionTracker::Offset>(stall_after);

  std::vector<WatchFlow> flows;
  flows.reserve(static_cast<std::size_t>(options.count));
  const int on = 1;
  for (int i = 0; i < options.count; ++i) {
    auto& flow = flows.emplace_back(
        utc_origin, std::chrono::duration_cast<InterruptionTracker::Offset>(period));
    flow.counted.assign(ring, 0);
    flow.fd = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!flow.fd.valid() ||
        ::setsockopt(flow.fd.get(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0 ||
        ::connect(flow.fd.get(), reinterpret_cast<const sockaddr*>(&*target), sizeof *target) !=
            0) {
      return SocketError{SocketFailure::create, std::string("udp socket: ") + std::strerror(errno)};
    }
    flow.result.src_port = local_port(flow.fd.get());
  }

  const ArrivalClock arrival_clock;
  const auto started = Clock::now();
  const auto last_tick_by = started + options.max_duration;
  std::uint32_t samples_sent = 0;
  std::vector<pollfd> pollfds(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) pollfds[i] = pollfd{flows[i].fd.get(), POLLIN, 0};

  auto offset = [&](Clock::time_point when) {
    return std::chrono::duration_cast<InterruptionTracker::Offset>(when - started);
  };
  StallRecorder stalls(utc_origin, stall_after_offset);
  Clock::duration max_lateness{0};
  // Reads every echo waiting on any socket, waiting at most `timeout_ms` for the first.
  ResidenceCount residences;
  auto drain_ready = [&](int timeout_ms) {
    if (::poll(pollfds.data(), pollfds.size(), timeout_ms) <= 0) return;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (pollfds[i].revents)
        drain(flows[i], arrival_clock, samples_sent, late_after, options.reply_timeout, started,
              stalls, residences);
    }
  };

  auto next_tick = started;
  Clock::time_point sampling_ended;
  Clock::time_point drain_until;
  bool sampling = true;
  while (true) {
    auto now = Clock::now();
    if (sampling && (stop.load() || now >= last_tick_by)) {
      sampling = false;
      report.stopped = stop.load();
      sampling_ended = now;
      drain_until = now + options.reply_timeout;
    }
    if (!sampling) {
      bool all_answered = std::all_of(flows.begin(), flows.end(), [](const WatchFlow& f) {
        return f.result.received == f.result.sent;
      });
      if (all_answered || now >= drain_until) break;
    }
    if (sampling && now >= next_tick) {
      max_lateness = std::max(max_lateness, now - next_tick);
      // Echoes that arrived while this thread was not running are credited before any sample
      // is judged: a sampler woken late must not find its own backlog late. Their arrival is
      // the kernel's stamp, so crediting them late changes nothing else.
      drain_ready(0);
      const auto sequence = samples_sent++;
      for (auto& flow : flows) {
        settle(flow, now, options.reply_timeout, late_after, started, stalls, false);
        const auto sent = Clock::now();
        if (flow.last_sent) stalls.sent(offset(*flow.last_sent), offset(sent));
        flow.last_sent = sent;
        auto bytes = encode_watch_probe(ProbeMessage{sequence, steady_ns(sent)});
        ++flow.result.sent;
        // A refused send (no route while the local link is down) is a sample not answered.
        if (::send(flow.fd.get(), bytes.data(), bytes.size(), 0) < 0) ++flow.result.send_errors;
        flow.pending.push_back(PendingSample{sequence, sent, Clock::now(), std::nullopt});
      }
      stalls.end_tick();
      // Ticks keep their schedule; after a stall (a stopped process) sampling resumes from now.
      next_tick += period;
      if (next_tick < now) next_tick = now + period;
      continue;
    }
    auto wake = sampling ? std::min(next_tick, last_tick_by) : drain_until;
    int timeout = wake <= now ? 0
                              : static_cast<int>(std::min<long long>(
                                    std::chrono::ceil<milliseconds>(wake - now).count(), 100));
    drain_ready(timeout);
    if (!report.sampling_since && std::all_of(flows.begin(), flows.end(), [](const WatchFlow& f) {
          return f.result.received > f.result.late;  // at least one echo within the late bound
        })) {
      now = Clock::now();
      report.sampling_since = utc_origin + std::chrono::duration_cast<milliseconds>(now - started);
      if (on_sampling) on_sampling();
    }
  }
  report.ended_at = utc_origin + std::chrono::duration_cast<milliseconds>(sampling_ended - started);

  const auto ended = offset(sampling_ended);
  for (auto& flow : flows) {
    // A sampler that stopped sending well before the stop was not sampling at the end either.
    if (flow.last_sent) stalls.sent(offset(*flow.last_sent), ended);
    settle(flow, Clock::now(), options.reply_timeout, late_after, started, stalls, true);
    flow.result.interruptions = flow.tracker.summary(ended);
    report.flows.push_back(flow.result);
  }
  stalls.end_tick();
  report.stalls = stalls.summary();
  report.echoes_with_residence = residences.answered;
  report.echoes_without_residence = residences.unanswered;
  report.stall_after = stall_after;
  report.max_tick_lateness = std::chrono::duration_cast<milliseconds>(max_lateness);
  report.verdict =
      judge(report.flows, report.stalls, options,
            std::chrono::duration_cast<milliseconds>(sampling_ended - started), report.reason);
  report.reason += "; resolution " + std::to_string(options.interval.count()) + " ms";
  return report;
}

}  // namespace fabgate::flows
