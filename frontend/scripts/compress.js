// After `react-scripts build`: a brotli (.br) and a gzip (.gz) copy beside every text asset of the
// build, so that the API process (api/static.py) and nginx (gzip_static) send them ready-made, at
// the strongest settings, instead of compressing on every request or not at all.
// Usage: node scripts/compress.js [build dir]  (default: $BUILD_PATH, else build/)
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const TEXT = new Set(['.js', '.css', '.html', '.svg', '.json', '.txt', '.webmanifest']);
const MIN_BYTES = 256; // below this the headers outweigh any saving

function* files(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else if (entry.isFile()) yield full;
  }
}

function compress(file) {
  const raw = fs.readFileSync(file);
  if (raw.length < MIN_BYTES) return null;
  const copies = {
    '.gz': zlib.gzipSync(raw, { level: zlib.constants.Z_BEST_COMPRESSION }),
    '.br': zlib.brotliCompressSync(raw, {
      params: {
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    }),
  };
  const sizes = { raw: raw.length };
  for (const [suffix, data] of Object.entries(copies)) {
    if (data.length >= raw.length) continue; // the plain file is served instead
    fs.writeFileSync(file + suffix, data);
    sizes[suffix] = data.length;
  }
  return sizes;
}

function main() {
  const build = path.resolve(process.argv[2] || process.env.BUILD_PATH || 'build');
  const kb = (n) => (n === undefined ? '-' : `${(n / 1024).toFixed(1)} kB`);
  for (const file of [...files(build)]) {
    if (!TEXT.has(path.extname(file))) continue;
    const sizes = compress(file);
    if (sizes) {
      console.log(`  ${path.relative(build, file).padEnd(40)} ${kb(sizes.raw).padStart(10)}`
        + `  gzip ${kb(sizes['.gz']).padStart(9)}  brotli ${kb(sizes['.br']).padStart(9)}`);
    }
  }
}

main();
