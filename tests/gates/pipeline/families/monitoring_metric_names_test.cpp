// The metric names freshness infers from promql probes (gates/pipeline/families/monitoring.h): every
// identifier a query selects with braces, so a probe's own metric must be fresh before it is
// believed.

#include <gtest/gtest.h>

#include "gates/pipeline/families/monitoring.h"

namespace fabgate::pipeline {
namespace {

using Names = std::vector<std::string>;

TEST(PromqlMetricNames, FindsEveryMetricSelectedWithBracesOnce) {
  // Given the docs' probe queries, then the metrics are found and functions, ranges,
  // aggregation labels and the {{series}} placeholder are not.
  EXPECT_EQ(promql_metric_names("sum(increase(node_network_receive_drop_total{ {{series}} }[5m]))"),
            Names{"node_network_receive_drop_total"});
  EXPECT_EQ(
      promql_metric_names("sum by (device) (rate(rdma_pfc_pause_rx_total{ {{series}} }[1m]))"),
      Names{"rdma_pfc_pause_rx_total"});
  EXPECT_EQ(
      promql_metric_names("fabgate_lab_link_up{ {{series}} } + fabgate_lab_link_up {x=\"1\"}"),
      Names{"fabgate_lab_link_up"});
  EXPECT_EQ(promql_metric_names("a:recorded:rate5m{job=\"n\"} / on(instance) b_total{job=\"n\"}"),
            (Names{"a:recorded:rate5m", "b_total"}));
}

TEST(PromqlMetricNames, IgnoresLabelValuesAndMetricsWithoutBraces) {
  // Given a label value that looks like a selector and a bare metric name, then neither is
  // taken for a metric: only selectors with braces name what the probe reads on its host.
  EXPECT_EQ(promql_metric_names("up{note=\"fake_metric{x}\"}"), Names{"up"});
  EXPECT_EQ(promql_metric_names("vector(1) + bare_metric"), Names{});
}

}  // namespace
}  // namespace fabgate::pipeline
