// SPDX-License-Identifier: AGPL-3.0-or-later
// Python's number formatting in JavaScript, digit for digit: format(x, ".Nf"), format(x, ".Ne"), format(x, ".Ng"),
// repr(x), str(int(x)).
//
// The rounding rule of the book's calculators is Python's: the exact binary value of the double is rounded to the
// printed digits, ties to even (format(0.125, ".2f") is "0.12").  JavaScript's toFixed and toExponential round
// ties away from zero (0.125.toFixed(2) is "0.13"), so they are not used: the exact value m * 2^e is expanded with
// BigInt and rounded here.  tests/test_calc_browser.py compares these functions with Python on exact ties.
(function (root) {
  "use strict";

  // [mantissa (BigInt), exponent] with |x| = mantissa * 2^exponent, for a finite x.
  function decompose(x) {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, Math.abs(x));
    const hi = view.getUint32(0);
    const lo = view.getUint32(4);
    const biased = (hi >>> 20) & 0x7ff;
    let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    if (biased === 0) return [mantissa, -1074];
    mantissa |= 1n << 52n;
    return [mantissa, biased - 1075];
  }

  // num / den rounded to an integer, ties to even (num >= 0, den > 0).
  function roundHalfEven(num, den) {
    const q = num / den;
    const twice = 2n * (num % den);
    return twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
  }

  // |x| as an exact fraction [num, den] of BigInts.
  function fraction(x) {
    const [m, e] = decompose(x);
    return e >= 0 ? [m << BigInt(e), 1n] : [m, 1n << BigInt(-e)];
  }

  function special(x) {
    if (Number.isNaN(x)) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    return null;
  }

  function sign(x) {
    return x < 0 || Object.is(x, -0) ? "-" : "";
  }

  const pow10 = (k) => 10n ** BigInt(k);

  // format(x, ".{digits}f")
  function fixed(x, digits) {
    const s = special(x);
    if (s) return s;
    const [num, den] = fraction(x);
    let text = roundHalfEven(num * pow10(digits), den).toString();
    if (digits > 0) {
      text = text.padStart(digits + 1, "0");
      text = text.slice(0, -digits) + "." + text.slice(-digits);
    }
    return sign(x) + text;
  }

  // format(x, ".{digits}e")
  function exponent(x, digits) {
    const s = special(x);
    if (s) return s;
    if (x === 0) return sign(x) + fixed(0, digits) + "e+00";
    const [num, den] = fraction(x);
    // e10 = floor(log10 |x|), exactly: the float estimate is corrected with integer comparisons.
    const reaches = (k) => (k >= 0 ? num >= den * pow10(k) : num * pow10(-k) >= den);
    let e10 = Math.floor(Math.log10(Math.abs(x)));
    while (!reaches(e10)) e10 -= 1;
    while (reaches(e10 + 1)) e10 += 1;
    const shift = digits - e10;
    let n = shift >= 0 ? roundHalfEven(num * pow10(shift), den) : roundHalfEven(num, den * pow10(-shift));
    if (n === pow10(digits + 1)) {
      n = pow10(digits);
      e10 += 1;
    }
    const t = n.toString();
    const mantissa = digits > 0 ? t[0] + "." + t.slice(1) : t;
    return sign(x) + mantissa + "e" + (e10 < 0 ? "-" : "+") + String(Math.abs(e10)).padStart(2, "0");
  }

  // format(x, ".{precision}g"); format(x, "g") is precision 6.
  function general(x, precision = 6) {
    const s = special(x);
    if (s) return s;
    const p = Math.max(precision, 1);
    const sci = exponent(x, p - 1);
    const e10 = Number(sci.slice(sci.indexOf("e") + 1));
    const strip = (t) => (t.includes(".") ? t.replace(/0+$/, "").replace(/\.$/, "") : t);
    if (e10 >= -4 && e10 < p) return strip(fixed(x, p - 1 - e10));
    const [mantissa, exp] = sci.split("e");
    return strip(mantissa) + "e" + exp;
  }

  // repr(x) of a Python float: the shortest round-trip digits (JavaScript finds the same ones), laid out as
  // Python does: scientific when the decimal exponent is below -4 or 16 and above, else fixed with ".0".
  function repr(x) {
    const s = special(x);
    if (s) return s;
    if (x === 0) return sign(x) + "0.0";
    const [mant, exp = "0"] = String(Math.abs(x)).split("e");
    const [whole, frac = ""] = mant.split(".");
    const all = whole + frac;
    const leading = all.length - all.replace(/^0+/, "").length;
    const digits = all.slice(leading).replace(/0+$/, "");
    const decpt = whole.length - leading + Number(exp); // |x| = 0.DIGITS * 10^decpt
    if (decpt <= -4 || decpt > 16) {
      const e10 = decpt - 1;
      const rest = digits.length > 1 ? "." + digits.slice(1) : "";
      return sign(x) + digits[0] + rest + "e" + (e10 < 0 ? "-" : "+") + String(Math.abs(e10)).padStart(2, "0");
    }
    if (decpt <= 0) return sign(x) + "0." + "0".repeat(-decpt) + digits;
    if (decpt >= digits.length) return sign(x) + digits + "0".repeat(decpt - digits.length) + ".0";
    return sign(x) + digits.slice(0, decpt) + "." + digits.slice(decpt);
  }

  // str(int(x)) for an integral float, any size (BigInt holds the exact value).
  function integer(x) {
    return BigInt(x).toString();
  }

  // str(value) of what a Python script prints for "int(v) if float(v).is_integer() else v".
  function intOrRepr(x) {
    return Number.isInteger(x) ? integer(x) : repr(x);
  }

  root.MLCalcFormat = { fixed, exponent, general, repr, integer, intOrRepr };
})(typeof window !== "undefined" ? window : globalThis);
