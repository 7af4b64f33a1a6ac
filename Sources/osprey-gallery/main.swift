import CGtk
import Foundation
import Osprey
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
// First: the pipeline made after it decodes on threads below the main thread's priority.
OspreyApplication.initialize()
let pipeline = ImagePipeline(cache: cache)
let gallery = GalleryWindow(urls: urls, cell: cell, size: size, pipeline: pipeline, script: script)
gallery.present()
OspreyApplication.run()
