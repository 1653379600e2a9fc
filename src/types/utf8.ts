// UTF-8 encoding and decoding for the core, which runs unchanged in Node and in a
// browser and so is type-checked without either's declarations (TextEncoder is
// unavailable there by type, not at run time).

/** The UTF-8 bytes of `s` (lone surrogates become U+FFFD, as TextEncoder does). */
export function encodeUtf8(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) {
    let cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  }
  return out;
}

/** The text of UTF-8 `bytes`; malformed sequences become U+FFFD as TextDecoder makes them (WHATWG's decoder). */
export function decodeUtf8(bytes: readonly number[]): string {
  let out = "";
  let cp = 0, needed = 0, seen = 0, lower = 0x80, upper = 0xbf;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (needed === 0) {
      if (b < 0x80) out += String.fromCharCode(b);
      else if (b >= 0xc2 && b <= 0xdf) { needed = 1; cp = b & 0x1f; }
      else if (b >= 0xe0 && b <= 0xef) {
        if (b === 0xe0) lower = 0xa0;
        if (b === 0xed) upper = 0x9f;
        needed = 2; cp = b & 0x0f;
      } else if (b >= 0xf0 && b <= 0xf4) {
        if (b === 0xf0) lower = 0x90;
        if (b === 0xf4) upper = 0x8f;
        needed = 3; cp = b & 0x07;
      } else out += "\ufffd";
      continue;
    }
    if (b < lower || b > upper) {
      // The sequence so far is one error; the byte starts afresh.
      cp = needed = seen = 0; lower = 0x80; upper = 0xbf;
      out += "\ufffd";
      i--;
      continue;
    }
    lower = 0x80; upper = 0xbf;
    cp = (cp << 6) | (b & 0x3f);
    if (++seen === needed) {
      out += String.fromCodePoint(cp);
      cp = needed = seen = 0;
    }
  }
  return needed > 0 ? out + "\ufffd" : out;
}
