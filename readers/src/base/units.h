/* The astronomers' units the readers convert to (phew_readers.h: PHEW_UNITS_ASTRO), in cgs,
 * the values yt uses, so that catalogues compare with yt's without a rescaling. */
#ifndef PHEW_READERS_UNITS_H
#define PHEW_READERS_UNITS_H

#define CM_PER_MPC 3.0856775814913673e24
#define G_PER_MSUN 1.98841586e33
#define CM_PER_S_PER_KM_PER_S 1.0e5

#endif
