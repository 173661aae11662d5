/// One metric as the exposition format lists it: its name (with `_total` for a counter),
/// its help, its type and its samples, each with its labels. What a process exposes is a
/// list of these, made afresh for each scrape from the numbers its loops keep.
public struct MetricFamily: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// One labelled value: a number (counter, gauge) or a whole histogram.
    public struct Sample: Sendable, Equatable {
        public var labels: [Label]
        public var value: Value

        public init(_ labels: [Label] = [], _ value: Value) {
            self.labels = labels
            self.value = value
        }
    }

    /// A label's name and value.
    public struct Label: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public enum Value: Sendable, Equatable {
        case number(Double)
        case histogram(Histogram)
    }

    public var name: String
    public var help: String
    public var kind: Kind
    public var samples: [Sample]

    public init(name: String, help: String, kind: Kind, samples: [Sample]) {
        self.name = name
        self.help = help
        self.kind = kind
        self.samples = samples
    }

    /// A counter with one unlabelled value.
    public static func counter(_ name: String, _ help: String, _ value: Int) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .counter, samples: [Sample([], .number(Double(value)))])
    }

    /// A counter with one value per label set.
    public static func counter(_ name: String, _ help: String, _ values: [([Label], Int)]) -> MetricFamily {
        MetricFamily(
            name: name, help: help, kind: .counter, samples: values.map { Sample($0.0, .number(Double($0.1))) })
    }

    /// A gauge with one unlabelled value.
    public static func gauge(_ name: String, _ help: String, _ value: Double) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .gauge, samples: [Sample([], .number(value))])
    }

    /// A histogram with one unlabelled value.
    public static func histogram(_ name: String, _ help: String, _ histogram: Histogram) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .histogram, samples: [Sample([], .histogram(histogram))])
    }
}
