//! The messages of Prometheus remote write 1.0 that headroom sends (`prompb/types.proto`
//! and `remote.proto`), declared with prost's derive so no protoc is needed. The `oneof`s
//! of the schema (`count`, `zero_count`) are declared as their integer member alone: on
//! the wire a set member of a oneof is that field, nothing more.

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    /// The series, each with its samples.
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// `prometheus.TimeSeries`: labels sorted by name, then float or histogram samples.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    /// Its labels, `__name__` included, sorted by name.
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    /// Float samples (counters).
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
    /// Native histogram samples.
    #[prost(message, repeated, tag = "4")]
    pub histograms: Vec<Histogram>,
}

/// `prometheus.Label`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    /// Label name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Label value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Sample`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// The value.
    #[prost(double, tag = "1")]
    pub value: f64,
    /// Milliseconds since the Unix epoch.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// `prometheus.Histogram`, integer counts only.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Histogram {
    /// Observations (`count_int` of the `count` oneof).
    #[prost(uint64, optional, tag = "1")]
    pub count_int: Option<u64>,
    /// Sum of the observations.
    #[prost(double, tag = "3")]
    pub sum: f64,
    /// Bucket schema: bucket boundaries grow by 2^(2^-schema).
    #[prost(sint32, tag = "4")]
    pub schema: i32,
    /// Width of the zero bucket.
    #[prost(double, tag = "5")]
    pub zero_threshold: f64,
    /// Observations in the zero bucket (`zero_count_int` of the `zero_count` oneof).
    #[prost(uint64, optional, tag = "6")]
    pub zero_count_int: Option<u64>,
    /// Runs of populated positive buckets.
    #[prost(message, repeated, tag = "11")]
    pub positive_spans: Vec<BucketSpan>,
    /// Each positive bucket's count as the change from the one before (the first from 0).
    #[prost(sint64, repeated, tag = "12")]
    pub positive_deltas: Vec<i64>,
    /// Whether the histogram was reset (0: unknown).
    #[prost(int32, tag = "14")]
    pub reset_hint: i32,
    /// Milliseconds since the Unix epoch.
    #[prost(int64, tag = "15")]
    pub timestamp: i64,
}

/// `prometheus.BucketSpan`: `length` consecutive buckets, `offset` after the previous span.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BucketSpan {
    /// Gap in buckets from the previous span's end (the first: the first bucket's index).
    #[prost(sint32, tag = "1")]
    pub offset: i32,
    /// Buckets in the span.
    #[prost(uint32, tag = "2")]
    pub length: u32,
}
