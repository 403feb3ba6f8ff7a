/* A first layer: a 7x7 convolution of a 3-channel image (stride 2, padding 3, NHWC) as one
 * LOOP_CONV_WS tile with the C library's first-layer packing, max_pixels_per_row = DIM/3
 * kernel columns per array row (sp_tiled_conv's choice, capped at the kernel width): each
 * input mvin also writes its pixels shifted into the rows above (config_ld pixel_repeats),
 * including the mvins at scratchpad row 0. */
#include "common.h"

#define BATCH 1
#define IN_DIM 12
#define IN_CH 3
#define OUT_CH (DIM + 2)
#define KDIM 7
#define STRIDE 2
#define PADDING 3
#define OUT_DIM ((IN_DIM + 2 * PADDING - KDIM) / STRIDE + 1)
#define SCALE 0.0625f
#define PIXELS (DIM / IN_CH < 1 ? 1 : DIM / IN_CH > KDIM ? KDIM : DIM / IN_CH)

static elem_t input[BATCH][IN_DIM][IN_DIM][IN_CH];
static elem_t weights[KDIM][KDIM][IN_CH][OUT_CH];
static acc_t bias[OUT_CH];
static elem_t output[BATCH][OUT_DIM][OUT_DIM][OUT_CH];
static elem_t ref[BATCH][OUT_DIM][OUT_DIM][OUT_CH];

static void reference(void)
{
  for (int b = 0; b < BATCH; b++)
    for (int orow = 0; orow < OUT_DIM; orow++)
      for (int ocol = 0; ocol < OUT_DIM; ocol++)
        for (int och = 0; och < OUT_CH; och++) {
          acc_t s = bias[och];
          for (int kr = 0; kr < KDIM; kr++)
            for (int kc = 0; kc < KDIM; kc++) {
              int irow = orow * STRIDE + kr - PADDING, icol = ocol * STRIDE + kc - PADDING;
              if (irow < 0 || icol < 0 || irow >= IN_DIM || icol >= IN_DIM)
                continue;
              for (int ich = 0; ich < IN_CH; ich++)
                s += (acc_t)input[b][irow][icol][ich] * weights[kr][kc][ich][och];
            }
          ref[b][orow][ocol][och] = acc_to_i8(s, SCALE, 1);
        }
}

int main(void)
{
  fill_i8(&input[0][0][0][0], sizeof(input), -128, 127);
  fill_i8(&weights[0][0][0][0], sizeof(weights), -128, 127);
  fill_i32(bias, OUT_CH, -3000, 3000);

  /* stale values in the rows the input tile will use, as an earlier layer leaves them: the
   * packed copies must overwrite them (and the pad pixels' copies write zeros) */
  gemmini_config_ld(DIM * sizeof(elem_t));
  for (int row = 0; row < IN_DIM * IN_DIM + 8 * IN_DIM; row += DIM)
    gemmini_mvin(&weights[0][0][0][0], row);
  gemmini_extended_config_st(OUT_CH * sizeof(elem_t), RELU, SCALE);
  gemmini_extended3_config_ex(WEIGHT_STATIONARY, NO_ACTIVATION, 0, ACC_SCALE_IDENTITY, 1, STRIDE, false,
                              false, false);
  gemmini_loop_conv_ws(BATCH, IN_DIM, IN_DIM, IN_CH, OUT_CH, OUT_DIM, OUT_DIM, OUT_DIM, OUT_DIM, STRIDE,
                       PADDING, KDIM, 1, 1, 1, 0,                  /* kernel dilation, pool size/stride/pad */
                       BATCH, OUT_DIM, OUT_DIM, OUT_CH, KDIM, KDIM, IN_CH,
                       PADDING, PADDING, PADDING, PADDING, 0, 0, 0, 0, /* l/r/u/d pad, pool pads */
                       OUT_DIM, OUT_DIM, weights, output, bias, input,
                       false, true, false, false, false, RELU,    /* no_bias, no_pool, downsample, wrot180, input_dilated, act */
                       false, false, false, false, PIXELS,        /* transposes, max_pixels_per_row */
                       IN_CH, OUT_CH, OUT_CH, false, 0, 0);       /* in/weight/out stride, dw, spad ids */
  gemmini_fence();

  reference();
  int bad = check_i8("conv", &output[0][0][0][0], &ref[0][0][0][0], sizeof(output));
  if (!bad)
    printf("conv_first_layer: PASS (%dx%dx%d -> %dx%dx%d)\n", IN_DIM, IN_DIM, IN_CH, OUT_DIM, OUT_DIM, OUT_CH);
  return bad;
}
