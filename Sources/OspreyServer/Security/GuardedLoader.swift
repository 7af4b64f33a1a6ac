import Osprey

/// A ``DataLoading`` that checks every request with a ``SourceGuard`` before sending it through
/// the wrapped loader. The downloader follows redirects itself, one `send` per hop, so every hop
/// is checked; a refusal fails the download with a reason carrying
/// ``SourceGuard/refusalMarker`` (mapped to 403).
struct GuardedLoader: DataLoading {
    /// The loader that sends the allowed requests.
    let base: any DataLoading
    /// The guard every request goes through.
    let sourceGuard: SourceGuard

    func send(_ request: DownloadRequest) async throws -> DataLoadingResponse {
        try await sourceGuard.check(request.url)
        return try await base.send(request)
    }
}
