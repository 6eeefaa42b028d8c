// The fp8 conversion routines (device/fp8.h) against an independent reference written from the
// format definitions: every code of both formats decoded, every fp16 value (and fp32 ties, tiny
// and huge values) encoded and compared with the nearest representable value chosen by search,
// ties to the even code, with the documented overflow, NaN and signed-zero rules. The simulator's
// VCVTF8 and the CPU reference both call these routines, so this is what keeps them honest.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "device/fp8.h"
#include "device/half.h"

namespace spyre {
namespace {

struct Spec {
    Fp8Format fmt;
    int exp_bits, man_bits, bias;
    bool ieee_specials;  // E5M2: all-ones exponent is inf (mantissa 0) or NaN; E4M3: only S.1111.111 is NaN
};
const Spec kE4M3{Fp8Format::E4M3, 4, 3, 7, false};
const Spec kE5M2{Fp8Format::E5M2, 5, 2, 15, true};

// The value of a code, from the format's definition, in double (NaN for NaN codes).
double ref_decode(const Spec &s, int code) {
    const int sign = code >> 7, e = (code >> s.man_bits) & ((1 << s.exp_bits) - 1), m = code & ((1 << s.man_bits) - 1);
    const int e_all = (1 << s.exp_bits) - 1;
    if (s.ieee_specials && e == e_all) return m ? std::nan("") : (sign ? -INFINITY : INFINITY);
    if (!s.ieee_specials && e == e_all && m == (1 << s.man_bits) - 1) return std::nan("");
    const double frac = double(m) / double(1 << s.man_bits);
    const double mag = e == 0 ? std::pow(2.0, 1 - s.bias) * frac : std::pow(2.0, e - s.bias) * (1.0 + frac);
    return sign ? -mag : mag;
}

// The code of a float by search: the nearest finite value (ties to the even code), so that values
// beyond the largest finite one take it (satfinite); zero and underflow keep the sign.
int ref_encode(const Spec &s, float v) {
    const int sign = std::signbit(v) ? 0x80 : 0;
    if (std::isnan(v)) return sign | (s.ieee_specials ? 0x7E : 0x7F);
    if (std::isinf(v) && s.ieee_specials) return sign | 0x7C;
    const double a = std::fabs(double(v));
    int best = 0;
    double best_d = INFINITY;
    for (int c = 0; c < 0x80; c++) {
        const double x = ref_decode(s, c);
        if (!std::isfinite(x)) continue;
        const double d = std::fabs(a - x);  // exact: both are short binary fractions in range
        if (d < best_d || (d == best_d && (c % 2) == 0)) best = c, best_d = d;
    }
    return sign | best;
}

void PrintTo(const Spec &s, std::ostream *os) { *os << fp8_format_name(s.fmt); }

class Fp8 : public ::testing::TestWithParam<Spec> {};
std::string spec_name(const ::testing::TestParamInfo<Spec> &info) { return fp8_format_name(info.param.fmt); }

TEST_P(Fp8, DecodeEveryCodeMatchesTheFormatDefinition) {
    const Spec s = GetParam();
    int nans = 0;
    for (int c = 0; c < 256; c++) {
        const double want = ref_decode(s, c);
        const float got = fp8_decode(uint8_t(c), s.fmt);
        if (std::isnan(want)) {
            nans++;
            EXPECT_TRUE(std::isnan(got)) << c;
            EXPECT_EQ(bool(c & 0x80), std::signbit(got)) << c;
            continue;
        }
        EXPECT_EQ(float(want), got) << "code " << c;
        EXPECT_EQ(double(got), want) << "code " << c << " is not exact in fp32";
        EXPECT_EQ(std::signbit(want), std::signbit(got)) << c;
        // Exact into fp16 as well.
        const uint16_t h = fp8_decode_half(uint8_t(c), s.fmt);
        EXPECT_EQ(double(half_to_float(h)), want) << "code " << c << " through fp16";
    }
    EXPECT_EQ(nans, s.fmt == Fp8Format::E4M3 ? 2 : 6);
}

TEST_P(Fp8, KnownValues) {
    const Spec s = GetParam();
    EXPECT_EQ(fp8_max(s.fmt), s.fmt == Fp8Format::E4M3 ? 448.0f : 57344.0f);
    EXPECT_EQ(fp8_decode(s.fmt == Fp8Format::E4M3 ? 0x7E : 0x7B, s.fmt), fp8_max(s.fmt));
    EXPECT_EQ(fp8_decode(0x01, s.fmt), s.fmt == Fp8Format::E4M3 ? std::ldexp(1.0f, -9) : std::ldexp(1.0f, -16));
    EXPECT_EQ(fp8_decode(s.fmt == Fp8Format::E4M3 ? 0x38 : 0x3C, s.fmt), 1.0f);
    EXPECT_EQ(fp8_encode(1.0f, s.fmt), s.fmt == Fp8Format::E4M3 ? 0x38 : 0x3C);
    EXPECT_EQ(fp8_encode(-2.0f, s.fmt), s.fmt == Fp8Format::E4M3 ? 0xC0 : 0xC0);
}

// Every fp16 value, both signs, zeros, subnormals, infinities and NaNs.
TEST_P(Fp8, EncodeEveryFp16ValueIsTheNearestEven) {
    const Spec s = GetParam();
    for (uint32_t h = 0; h < 65536; h++) {
        const float v = half_to_float(uint16_t(h));
        const int want = ref_encode(s, v);
        ASSERT_EQ(want, fp8_encode(v, s.fmt)) << "fp16 0x" << std::hex << h << " = " << v;
        ASSERT_EQ(want, fp8_encode_half(uint16_t(h), s.fmt)) << "table, fp16 0x" << std::hex << h;
    }
}

// Every finite code decodes and encodes back to itself; NaN codes encode back to the canonical NaN.
TEST_P(Fp8, CodesRoundTrip) {
    const Spec s = GetParam();
    for (int c = 0; c < 256; c++) {
        const float v = fp8_decode(uint8_t(c), s.fmt);
        const int back = fp8_encode(v, s.fmt);
        if (std::isnan(v)) EXPECT_EQ(back, (c & 0x80) | (s.fmt == Fp8Format::E4M3 ? 0x7F : 0x7E)) << c;
        else EXPECT_EQ(back, c) << c;
    }
}

// Midpoints between neighbouring codes go to the even code; a hair above or below goes to the
// nearer one. fp32 midpoints are exact (one more bit than the format).
TEST_P(Fp8, TiesGoToEvenAndNeighboursOfTiesRoundToNearest) {
    const Spec s = GetParam();
    const int top = s.fmt == Fp8Format::E4M3 ? 0x7E : 0x7B;
    for (int c = 0; c < top; c++) {
        const float lo = float(ref_decode(s, c)), hi = float(ref_decode(s, c + 1));
        const float mid = float((double(lo) + double(hi)) / 2);
        ASSERT_EQ(double(mid), (double(lo) + double(hi)) / 2);
        for (int sign : {0, 0x80}) {
            const float m = sign ? -mid : mid;
            EXPECT_EQ(fp8_encode(m, s.fmt), sign | (c % 2 == 0 ? c : c + 1)) << "tie above code " << c;
            EXPECT_EQ(fp8_encode(std::nextafter(m, 0.0f), s.fmt), sign | c) << "below the tie above " << c;
            EXPECT_EQ(fp8_encode(std::nextafter(m, sign ? -INFINITY : INFINITY), s.fmt), sign | (c + 1))
                << "above the tie above " << c;
        }
    }
}

// satfinite: finite values beyond the range give the largest finite code; infinities give inf in
// E5M2 and the largest finite value in E4M3; NaN gives the canonical NaN with its sign.
TEST_P(Fp8, OverflowSaturatesAndSpecialsFollowTheRules) {
    const Spec s = GetParam();
    const int max = s.fmt == Fp8Format::E4M3 ? 0x7E : 0x7B;
    const float big[] = {fp8_max(s.fmt), std::nextafter(fp8_max(s.fmt), INFINITY), fp8_max(s.fmt) * 1.0625f,
                         fp8_max(s.fmt) * 1.25f, 65504.0f, 1e10f, std::numeric_limits<float>::max()};
    for (float v : big) {
        EXPECT_EQ(fp8_encode(v, s.fmt), max) << v;
        EXPECT_EQ(fp8_encode(-v, s.fmt), 0x80 | max) << -v;
    }
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(fp8_encode(inf, s.fmt), s.ieee_specials ? 0x7C : max);
    EXPECT_EQ(fp8_encode(-inf, s.fmt), s.ieee_specials ? 0xFC : 0x80 | max);
    const int nan = s.fmt == Fp8Format::E4M3 ? 0x7F : 0x7E;
    EXPECT_EQ(fp8_encode(std::numeric_limits<float>::quiet_NaN(), s.fmt), nan);
    EXPECT_EQ(fp8_encode(-std::numeric_limits<float>::quiet_NaN(), s.fmt), 0x80 | nan);
    EXPECT_EQ(fp8_encode(std::numeric_limits<float>::signaling_NaN(), s.fmt), nan);
    if (s.ieee_specials) {
        EXPECT_TRUE(std::isinf(fp8_decode(0x7C, s.fmt)) && fp8_decode(0x7C, s.fmt) > 0);
        EXPECT_TRUE(std::isinf(fp8_decode(0xFC, s.fmt)) && fp8_decode(0xFC, s.fmt) < 0);
        EXPECT_EQ(fp8_decode_half(0xFC, s.fmt), 0xFC00);
    }
}

// Signed zeros, and the subnormal range down to underflow, including the float subnormals.
TEST_P(Fp8, ZerosAndSubnormals) {
    const Spec s = GetParam();
    EXPECT_EQ(fp8_encode(0.0f, s.fmt), 0x00);
    EXPECT_EQ(fp8_encode(-0.0f, s.fmt), 0x80);
    EXPECT_TRUE(std::signbit(fp8_decode(0x80, s.fmt)) && fp8_decode(0x80, s.fmt) == 0.0f);
    EXPECT_EQ(fp8_decode_half(0x80, s.fmt), 0x8000);
    const float q = std::ldexp(1.0f, 1 - s.bias - s.man_bits);  // smallest subnormal
    EXPECT_EQ(fp8_encode(q, s.fmt), 0x01);
    EXPECT_EQ(fp8_encode(q / 2, s.fmt), 0x00);                           // tie with zero: even
    EXPECT_EQ(fp8_encode(-q / 2, s.fmt), 0x80);
    EXPECT_EQ(fp8_encode(std::nextafter(q / 2, 1.0f), s.fmt), 0x01);     // just above the tie
    EXPECT_EQ(fp8_encode(q * 1.5f, s.fmt), 0x02);                        // tie between 1 and 2: even
    EXPECT_EQ(fp8_encode(q * 2.5f, s.fmt), 0x02);
    EXPECT_EQ(fp8_encode(std::numeric_limits<float>::denorm_min(), s.fmt), 0x00);
    EXPECT_EQ(fp8_encode(-std::numeric_limits<float>::min(), s.fmt), 0x80);
    // The largest subnormal rounds up into the smallest normal at its upper tie.
    const int smallest_normal = 1 << s.man_bits;
    const float top_sub = float(ref_decode(s, smallest_normal - 1)), min_normal = float(ref_decode(s, smallest_normal));
    EXPECT_EQ(fp8_encode(float((double(top_sub) + min_normal) / 2), s.fmt), smallest_normal);
}

// Random fp32 values over the whole exponent range against the search.
TEST_P(Fp8, EncodeRandomFp32MatchesSearch) {
    const Spec s = GetParam();
    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> bits;
    for (int i = 0; i < 200000; i++) {
        // Exponents from 2^-30 to 2^20: beyond that the answer is 0 or the maximum and the search's
        // double difference would lose exactness.
        uint32_t b = bits(rng);
        uint32_t e = 97 + (b >> 23) % 51;
        b = (b & 0x807fffffu) | (e << 23);
        float v;
        std::memcpy(&v, &b, 4);
        ASSERT_EQ(ref_encode(s, v), fp8_encode(v, s.fmt)) << v;
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8, ::testing::Values(kE4M3, kE5M2), spec_name);

}  // namespace
}  // namespace spyre
