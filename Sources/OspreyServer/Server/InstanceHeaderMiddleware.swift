import HTTPTypes
import Hummingbird

/// Names the instance that answered in every response (`X-Osprey-Instance`), so that a load
/// balancer's logs and a client's debugging can tell the instances of a cluster apart.
struct InstanceHeaderMiddleware<Context: RequestContext>: RouterMiddleware {
    static var field: HTTPField.Name { .ospreyInstance }

    let name: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[Self.field] = name
        return response
    }
}

extension HTTPField.Name {
    /// `X-Osprey-Instance`, made once (a name is validated when made).
    static let ospreyInstance = HTTPField.Name("X-Osprey-Instance")!
}
