// As in swift-metrics: `import Metrics` brings in CoreMetrics, where the metric types live.
@_exported import CoreMetrics
