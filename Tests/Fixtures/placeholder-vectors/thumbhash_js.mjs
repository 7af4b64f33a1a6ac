// Runs the ThumbHash reference (evanw/thumbhash's js/thumbhash.js, passed by path, never committed
// here) over the rasters read as JSON from stdin; prints its hashes and decodes as JSON.
// Usage: node thumbhash_js.mjs /path/to/thumbhash.js < rasters.json
import { pathToFileURL } from 'node:url'
import { readFileSync } from 'node:fs'

const reference = await import(pathToFileURL(process.argv[2]).href)
const rasters = JSON.parse(readFileSync(0, 'utf8'))
const out = rasters.map(({ name, width, height, rgba }) => {
  const pixels = Uint8Array.from(Buffer.from(rgba, 'base64'))
  const hash = reference.rgbaToThumbHash(width, height, pixels)
  const decoded = reference.thumbHashToRGBA(hash)
  return {
    name,
    hash: Array.from(hash),
    decoded: { width: decoded.w, height: decoded.h, rgba: Buffer.from(decoded.rgba).toString('base64') },
    average: reference.thumbHashToAverageRGBA(hash),
    aspect: reference.thumbHashToApproximateAspectRatio(hash),
  }
})
process.stdout.write(JSON.stringify(out))
