import Foundation

// The names Osprey used before 0.1 for the failed-URL list, kept so that code written against
// them still builds; each says what replaced it.

extension ImageDownloader {
    /// Whether `url` is on the failed-URL list.
    @available(*, deprecated, renamed: "isOnFailedURLList(_:)")
    public func isBlacklisted(_ url: URL) -> Bool { isOnFailedURLList(url) }
    /// Puts `url` on the failed-URL list.
    @available(*, deprecated, renamed: "addToFailedURLList(_:)")
    public func addToBlacklist(_ url: URL) { addToFailedURLList(url) }
    /// Removes `url` from the failed-URL list.
    @available(*, deprecated, renamed: "removeFromFailedURLList(_:)")
    public func removeFromBlacklist(_ url: URL) { removeFromFailedURLList(url) }
    /// Empties the failed-URL list.
    @available(*, deprecated, renamed: "clearFailedURLList()")
    public func clearBlacklist() { clearFailedURLList() }
}

extension ImageDownloader.Configuration {
    /// Whether permanent failures go on the failed-URL list. Default `true`.
    @available(*, deprecated, renamed: "remembersFailedURLs")
    public var blacklistsFailedURLs: Bool {
        get { remembersFailedURLs }
        set { remembersFailedURLs = newValue }
    }
}

extension OspreyError.DownloadReason {
    /// The URL is on the failed-URL list (construction only; match ``previouslyFailed(url:)``).
    @available(*, deprecated, renamed: "previouslyFailed(url:)")
    public static func blacklisted(url: URL) -> Self { .previouslyFailed(url: url) }
}
