import OspreyGTK

// osprey-gallery: a GtkGridView of remote images loaded by Osprey (the example of the DocC
// article "Loading into GTK widgets"). Top-level code runs on the main actor, on the main thread.
let options = GalleryOptions.parseOrExit()
let urls: [URL]
do {
    urls = try options.urls()
} catch {
    GalleryOptions.exit(withError: error)
}
let script = options.script.map { try! GalleryScript.parse($0) }  // validated by parseOrExit
let cell = try! options.size(options.cell, "--cell")
let size = try! options.size(options.window, "--window")

// The cache: the user cache by default, else the directory given.
let cache =
    options.cacheDirectory.map { directory in
        ImageCache(
            memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config()),
            diskStorage: DiskStorage.Backend(
                config: DiskStorage.Config(name: "gallery", directory: URL(fileURLWithPath: directory, isDirectory: true))))
    } ?? ImageCache.default
// Decode below the main thread's priority (pipelines made after this).
ImagePipeline.Configuration.defaultProcessingThreadNice = 10
let pipeline = ImagePipeline(cache: cache)

// GTK's own application loop and no Osprey set-up call: the grid installs the main actor on it.
GalleryWindow.pending = (urls, cell, size, pipeline, script)
let application = gtk_application_new("org.osprey.Gallery", G_APPLICATION_NON_UNIQUE)!
let activate: @convention(c) (UnsafeMutablePointer<GtkApplication>?, UnsafeMutableRawPointer?) -> Void = { application, _ in
    MainActor.assumeIsolated { GalleryWindow.activate(application!) }
}
g_signal_connect_data(application, "activate", unsafeBitCast(activate, to: GCallback.self), nil, nil, GConnectFlags(rawValue: 0))
// No arguments for GApplication: the options were parsed above.
let status = g_application_run(UnsafeMutableRawPointer(application).assumingMemoryBound(to: GApplication.self), 0, nil)
g_object_unref(UnsafeMutableRawPointer(application))
exit(status)
