/// The resolved options of one request, held once and shared by reference: by the request
/// (``PipelineRequest``) and by the stages it starts (``StageContext``). ``ResolvedOptions`` is a
/// large value with about twenty references; every copy retains each of them and releases them
/// again, which the miss profile (benchmark scenario 2) showed among its largest costs.
///
/// Read a field through any reference (`context.options.storage`). On a miss's path (resolution,
/// the fetch key, the stages, the store), use the options whole (bind them, pass them on, call a
/// method or a computed property such as `cacheOptions`) through a local reference to the box
/// (`let shared = request.sharedOptions; shared.value.cacheOptions`): through a stored property's
/// reference the compiler copies the whole options first (perf probes on the outlined copy,
/// scenario 2: six copies per miss, about 180 retains and releases). Paths that run once per
/// preview listener, revalidation or animation bind them plainly; a copy there is noise.
@usableFromInline
final class SharedOptions: Sendable {
    let value: ResolvedOptions

    init(_ value: ResolvedOptions) {
        self.value = value
    }
}
