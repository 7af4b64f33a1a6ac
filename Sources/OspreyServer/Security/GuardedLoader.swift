import Foundation
import Osprey

/// A ``DataLoading`` that checks every request with a ``SourceGuard`` before sending it through
/// the wrapped loader. The downloader follows redirects itself, one `send` per hop, so every hop
/// is checked; a refusal fails the download with a reason carrying
/// ``SourceGuard/refusalMarker`` (mapped to 403).
///
/// Pinning: async-http-client 1.37 resolves host names itself and offers no per-request resolver
/// hook and no way to see the address it connected to (its `dnsOverride` is fixed per client).
/// So for `http` the request is sent to the checked address itself (the URL's host replaced by
/// it, the `Host` header keeping the name): the address connected to is the address checked,
/// and DNS rebinding between the check and the connection cannot redirect it. The addresses are
/// tried in the resolver's order, the next after a failure to connect. For `https` the name must
/// stay in the URL (certificate and SNI), so the client resolves it again when it connects: a
/// DNS answer that changes between the check and the connection (rebinding with a zero TTL) is
/// not caught there; deployments that need that closed should filter egress at the network too.
struct GuardedLoader: DataLoading {
    /// The loader that sends the allowed requests.
    let base: any DataLoading
    /// The guard every request goes through.
    let sourceGuard: SourceGuard

    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        let addresses = try await sourceGuard.checkedAddresses(request.url)
        guard request.url.scheme?.lowercased() == "http" else { return try await base.send(request) }
        var failure: (any Error)?
        for address in addresses {
            do {
                return try await base.send(Self.pinned(request, to: address))
            } catch {
                if Task.isCancelled { throw error }
                failure = error
            }
        }
        throw failure ?? ServerError(status: 502, reason: "cannot resolve the host of source \(request.url.absoluteString)")
    }

    /// `request` sent to `address`: the URL's host replaced by it, the original host (and port)
    /// in the `Host` header.
    static func pinned(_ request: DownloadRequest, to address: IPAddress) -> DownloadRequest {
        guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false),
            let host = components.percentEncodedHost, !host.isEmpty
        else { return request }
        components.percentEncodedHost = address.urlHost
        guard let url = components.url else { return request }
        var pinned = request
        pinned.url = url
        if pinned.value(forHTTPHeaderField: "Host") == nil {
            pinned.setValue(components.port.map { "\(host):\($0)" } ?? host, forHTTPHeaderField: "Host")
        }
        return pinned
    }
}
