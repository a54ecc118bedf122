/* The cube root rounded correctly (to the nearest double): the exact cube of a double gives that
 * double back, which libm's cbrt does not promise (glibc's cbrt(2^-9) is 0.12499999999999999,
 * not 0.125). Friends-of-Friends takes its mean interparticle spacing from it. */
#ifndef PHEW_BASE_CUBE_ROOT_H
#define PHEW_BASE_CUBE_ROOT_H

/* x^(1/3) rounded to nearest, for any finite x (negative: -cube_root(-x)); 0, infinities and
 * NaN as cbrt gives them. */
double cube_root(double x);

#endif
