// `import OspreyGTK` is all a GTK program needs: GTK's C declarations (`gtk_window_new`,
// `g_application_run`, …), Osprey's pipeline and targets, and Foundation's `URL`.
@_exported import CGtk
@_exported import Foundation
@_exported import Osprey
