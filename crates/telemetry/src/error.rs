//! Why telemetry cannot be exported.

/// Why an exporter could not be started. Deciding never waits for one: the caller reports it and decides on.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` asks for a protocol this build does not send.
    #[error(
        "`OTEL_EXPORTER_OTLP_PROTOCOL` is `{0}`; agent-guard sends OTLP over HTTP with protobuf only (`http/protobuf`)"
    )]
    Protocol(String),
    /// The OTLP client could not be built (an endpoint that is no URL, a header that is no header).
    #[error("cannot start the OTLP exporter: {0}")]
    Build(String),
}
