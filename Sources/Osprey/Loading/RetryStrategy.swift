import Foundation

/// What a retry decision is told about a failed attempt.
package struct RetryContext: Sendable {
    /// The request of the failed attempt.
    package var request: DownloadRequest
    /// The failure: a transport error, or an invalid status code of 5xx or 429.
    package var error: OspreyError
    /// How many retries were already made for this download (0 after the first attempt).
    package var retryCount: Int
    /// The delay the server asked for with `Retry-After`, if any.
    package var retryAfter: Duration?

    /// Creates a context (the downloader does; useful to test a custom strategy).
    package init(request: DownloadRequest, error: OspreyError, retryCount: Int, retryAfter: Duration? = nil) {
        self.request = request
        self.error = error
        self.retryCount = retryCount
        self.retryAfter = retryAfter
    }
}

/// The downloader's retry decision (``ImageDownloader``'s transfer loop asks it after every failed attempt).
extension RetryContext {
    /// How long to wait before trying again after `error`, or `nil` to fail: only retriable
    /// failures are offered to `strategy`, and the wait is the larger of its delay and the
    /// server's `Retry-After`.
    static func delayBeforeRetry(
        after error: OspreyError, request: DownloadRequest, retryCount: Int, strategy: (any RetryDeciding)?
    ) -> Duration? {
        guard let strategy, let retryAfter = retriability(of: error) else { return nil }
        let context = RetryContext(request: request, error: error, retryCount: retryCount, retryAfter: retryAfter)
        guard let delay = strategy.retryDelay(for: context) else { return nil }
        return max(delay, retryAfter ?? .zero)
    }

    /// `nil` when `error` must not be retried; otherwise `.some` of the server's `Retry-After`.
    static func retriability(of error: OspreyError) -> Duration?? {
        guard case .download(let reason) = error else { return nil }
        switch reason {
        case .transport:
            return .some(nil)
        case .invalidStatusCode(let code, let response) where code == 429 || (500..<600).contains(code):
            return .some(RetryAfter.parse(response.value(forHTTPHeaderField: "Retry-After")))
        default:
            return nil
        }
    }
}

/// Decides whether and when a failed download is tried again: ``RetryStrategy``, or a test's recorder.
package protocol RetryDeciding: Sendable {
    /// Returns the delay before the next attempt, or `nil` to give up.
    func retryDelay(for context: RetryContext) -> Duration?
}

/// Retries a failed download up to a maximum number of times with a fixed or growing delay
/// (Kingfisher's `DelayRetryStrategy`).
///
/// Only *retriable* failures are retried: transport errors (connection refused, reset, dropped
/// mid-body) and status codes 5xx and 429; never cancellations, timeouts (the timeout bounds the
/// whole download), 4xx other than 429, or invalid content. The delay actually waited is the
/// larger of the strategy's and the server's `Retry-After`.
public struct RetryStrategy: RetryDeciding {
    /// How the delay between attempts is computed.
    public enum Interval: Sendable, Hashable {
        /// The same delay before every retry.
        case fixed(Duration)
        /// The delay grows by this amount with every retry: 1×, 2×, 3× … .
        case accumulated(Duration)
    }

    /// The maximum number of retries. Default 3.
    public var maxRetryCount: Int
    /// The delay. Default `.fixed(.seconds(1))`.
    public var interval: Interval

    /// Creates a strategy retrying up to `maxRetryCount` times (default 3) waiting `interval`
    /// (default 1 s, fixed) before each retry.
    public init(maxRetryCount: Int = 3, interval: Interval = .fixed(.seconds(1))) {
        self.maxRetryCount = maxRetryCount
        self.interval = interval
    }

    /// The interval's delay while fewer than ``maxRetryCount`` retries were made, else `nil`.
    package func retryDelay(for context: RetryContext) -> Duration? {
        guard context.retryCount < maxRetryCount else { return nil }
        switch interval {
        case .fixed(let delay): return delay
        case .accumulated(let step): return step * (context.retryCount + 1)
        }
    }
}

enum RetryAfter {
    /// Parses `Retry-After` as delta-seconds or an HTTP date (relative to `now`).
    static func parse(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return .seconds(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1000)))
    }
}
