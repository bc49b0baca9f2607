import { readdirSync, readlinkSync } from 'node:fs';

/** Descriptors of this process open on `path` (Linux: /proc/self/fd). */
export function openDescriptors(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false; // closed between the listing and the read
    }
  }).length;
}
