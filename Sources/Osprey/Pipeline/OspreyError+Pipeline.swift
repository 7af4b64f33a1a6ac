extension OspreyError {
    /// Whether the error means the request was cancelled (not that it failed).
    public var isCancellation: Bool {
        switch self {
        case .pipeline(.cancelled), .download(.cancelled): true
        default: false
        }
    }

    /// `error` as an ``OspreyError``: itself, a cancellation for `CancellationError`, or an
    /// ``OspreyError/PipelineReason/unexpected(message:)`` naming it.
    static func wrapping(_ error: any Error, source: ImageSource?) -> OspreyError {
        if let error = error as? OspreyError { return error }
        if error is CancellationError { return .pipeline(.cancelled(source: source?.description ?? "")) }
        return .pipeline(.unexpected(message: "\(error)"))
    }
}
