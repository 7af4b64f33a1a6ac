/// The resolved options of one request, held once and shared by reference: by the request
/// (``PipelineRequest``) and by the stages it starts (``StageContext``). ``OspreyOptions`` is a
/// large value with about twenty references; every copy retains each of them and releases them
/// again, which the miss profile (benchmark scenario 2) showed among its largest costs.
@usableFromInline
final class SharedOptions: Sendable {
    let value: OspreyOptions

    init(_ value: OspreyOptions) {
        self.value = value
    }
}
