import Hummingbird
import NIOCore

/// A request context that knows its connection's channel, so a request can learn when its client
/// goes away (``ConnectionWatcher``).
protocol ChannelRequestContext: RequestContext {
    /// The connection's channel (`nil` when the request did not come from one, e.g. in tests of
    /// the router alone).
    var channel: (any Channel)? { get }
}

/// The server's request context: Hummingbird's basic one plus the channel.
struct OspreyRequestContext: ChannelRequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: (any Channel)?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
