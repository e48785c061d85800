// Reading a POSIX tar stream (optionally gzip) as FORMAT.md 16.1 writes
// it, with the reading rules of 16.1 (revision 6): a block of zeros where a
// header is expected ends the archive, and every byte after it must be
// zero; any other block that is not a header (a bad checksum or number
// field, cut short, or no block at all) is a damaged archive; PAX "x"
// records and GNU long names apply to the member after them; data cut
// short is damage. A gzip stream is one member whose CRC-32 and length
// match, with nothing after it.

export class TarError extends Error {}

const BLOCK = 512;

function nts(bytes) {
  const end = bytes.indexOf(0);
  return new TextDecoder("utf-8").decode(end < 0 ? bytes : bytes.subarray(0, end));
}

// An octal (or base-256) number field; null when it is neither.
function nti(bytes) {
  if (bytes[0] === 0o200 || bytes[0] === 0o377) {
    let n = 0n;
    for (let i = 1; i < bytes.length; i++) n = (n << 8n) | BigInt(bytes[i]);
    if (bytes[0] === 0o377) n -= 1n << BigInt(8 * (bytes.length - 1));
    return Number(n);
  }
  const end = bytes.indexOf(0);
  const text = String.fromCharCode(...(end < 0 ? bytes : bytes.subarray(0, end))).trim();
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text)) return null;
  return parseInt(text, 8);
}

function checksumOk(h) {
  const want = nti(h.subarray(148, 156));
  if (want === null) return false;
  let unsigned = 256;
  let signed = 256;
  for (let i = 0; i < BLOCK; i++) {
    if (i >= 148 && i < 156) continue;
    unsigned += h[i];
    signed += h[i] > 127 ? h[i] - 256 : h[i];
  }
  return want === unsigned || want === signed;
}

function parsePax(data) {
  const text = new TextDecoder("utf-8").decode(data);
  const out = {};
  let i = 0;
  while (i < text.length) {
    const m = /^(\d+) ([^=]+)=/.exec(text.slice(i));
    if (m === null) throw new TarError("bad PAX record");
    const length = Number(m[1]);
    out[m[2]] = text.slice(i + m[0].length, i + length - 1);
    i += length;
  }
  return out;
}

let crcTable = null;

function crc32(bytes) {
  if (crcTable === null) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = crcTable[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  let out;
  try {
    out = new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (err) {
    throw new TarError(`the gzip stream is damaged: ${err.message}`);
  }
  // One member and nothing after it: the file's last 8 bytes are the
  // trailer of the whole output (CRC-32, then the length mod 2^32, little-endian).
  const n = bytes.length;
  const view = new DataView(bytes.buffer, bytes.byteOffset, n);
  if (n < 18 || view.getUint32(n - 8, true) !== crc32(out) || view.getUint32(n - 4, true) !== out.length % 2 ** 32) {
    throw new TarError("the gzip stream is not one whole member with nothing after it");
  }
  return out;
}

// Members one by one: {name, type, size, data()} where data() throws
// TarError when the member is cut short. Ends with null.
export class TarReader {
  constructor(bytes) {
    this.bytes = bytes;
    this.offset = 0;
    this.first = true;
  }

  header() {
    const h = this.bytes.subarray(this.offset, this.offset + BLOCK);
    if (this.first && (h.length < BLOCK || !checksumOk(h))) {
      throw new TarError(h.length === 0 ? "the file is empty" : "the file is not a tar archive");
    }
    if (h.length === BLOCK && h.every((b) => b === 0)) return null; // the end of the archive
    if (h.length === 0) throw new TarError("the tar stream ends without an end-of-archive block");
    if (h.length < BLOCK || !checksumOk(h)) throw new TarError(`a damaged tar header at byte ${this.offset}`);
    this.offset += BLOCK;
    return h;
  }

  // After the end-of-archive block: every byte left must be zero.
  checkEnd() {
    if (!this.bytes.subarray(this.offset).every((b) => b === 0)) {
      throw new TarError("non-zero bytes follow the end of the tar archive");
    }
  }

  next() {
    let h = this.header();
    if (h === null) return null;
    const overrides = {};
    for (;;) {
      const type = String.fromCharCode(h[156]);
      const size = nti(h.subarray(124, 136));
      if (size === null) throw new TarError(`a damaged tar header at byte ${this.offset - BLOCK}: bad size field`);
      if (type !== "x" && type !== "g" && type !== "L") {
        this.first = false;
        let name = nts(h.subarray(0, 100));
        const magic = String.fromCharCode(...h.subarray(257, 263));
        const prefix = magic === "ustar\0" ? nts(h.subarray(345, 500)) : "";
        if (prefix !== "") name = prefix + "/" + name;
        let kind = type === "\0" ? "0" : type;
        if (kind === "0" && name.endsWith("/") && type === "\0") kind = "5";
        const member = { name: overrides.path ?? name, type: kind, size: overrides.size ?? size, offset: this.offset };
        const regular = member.type === "0" || member.type === "7";
        if (regular) this.offset += Math.ceil(member.size / BLOCK) * BLOCK;
        return member;
      }
      const data = this.bytes.subarray(this.offset, this.offset + size);
      if (data.length < size) throw new TarError("an extended header is cut short");
      this.offset += Math.ceil(size / BLOCK) * BLOCK;
      if (type === "x") {
        const pax = parsePax(data);
        if ("path" in pax) overrides.path = pax.path;
        if ("size" in pax) overrides.size = Number(pax.size);
      } else if (type === "L") overrides.path = nts(data);
      h = this.bytes.subarray(this.offset, this.offset + BLOCK);
      if (h.length < BLOCK || !checksumOk(h)) throw new TarError("a header after an extended header is damaged");
      this.offset += BLOCK;
    }
  }

  data(member) {
    const out = this.bytes.subarray(member.offset, member.offset + member.size);
    if (out.length !== member.size) throw new TarError(`member ${member.name} is cut short`);
    return out;
  }
}
