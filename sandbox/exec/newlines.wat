(module
  (memory (export "memory") 17)
  ;; count(ptr, len): number of 0x0a bytes in memory[ptr, ptr + len)
  (func (export "count") (param $p i32) (param $n i32) (result i32)
    (local $end i32) (local $stop i32) (local $acc v128) (local $sum v128) (local $total i32)
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    ;; 16-byte blocks, at most 255 per batch so no byte lane of $acc overflows
    (block $blocks
      (loop $batch
        (br_if $blocks (i32.gt_u (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
        (local.set $stop (i32.add (local.get $p) (i32.const 4080)))
        (if (i32.gt_u (local.get $stop) (i32.sub (local.get $end) (i32.const 15)))
          (then (local.set $stop (i32.sub (local.get $end) (i32.const 15)))))
        (local.set $acc (v128.const i64x2 0 0))
        (loop $inner
          (local.set $acc
            (i8x16.sub (local.get $acc)
              (i8x16.eq (v128.load (local.get $p)) (i8x16.splat (i32.const 10)))))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (br_if $inner (i32.lt_u (local.get $p) (local.get $stop))))
        (local.set $sum
          (i32x4.add (local.get $sum)
            (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $acc)))))
        (br $batch)))
    (local.set $total
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
        (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
    ;; the last < 16 bytes one at a time
    (block $done
      (loop $tail
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 10))
          (then (local.set $total (i32.add (local.get $total) (i32.const 1)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $tail)))
    (local.get $total)))
