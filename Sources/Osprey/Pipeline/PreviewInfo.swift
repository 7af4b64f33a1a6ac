/// What a progressive preview was made from (``ImageResult/preview``): how much of the body had
/// arrived and how many of its scans it holds.
public struct PreviewInfo: Sendable, Hashable {
    /// Bytes of the body received when the preview's decode started.
    public var receivedBytes: Int
    /// The body's announced length (`nil` when the server did not say).
    public var expectedBytes: Int?
    /// The complete scans the preview was decoded from (1 for a first, DC-only preview).
    public var scans: Int
    /// The preview's number for its download: 1 for the first, then 2, 3, …
    public var index: Int

    /// A preview of `scans` scans from `receivedBytes` of `expectedBytes`, the `index`-th.
    public init(receivedBytes: Int, expectedBytes: Int?, scans: Int, index: Int) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
        self.scans = scans
        self.index = index
    }
}
