/*
 * The egress bench's yardstick (bench/egress.bench.ts): the fastest plain TCP relays
 * this machine can run, to set the egress proxy's 400 MB figures against what any relay
 * costs here, not only against no relay. Never built into Toolwire; the bench compiles
 * it with `cc` when the machine has one.
 *
 *   native-relay <mode> <upstream port>   prints the loopback port it listens on
 *
 * Each connection gets a process per direction.
 * mode: rw       read() and write() of 1 MiB in turn (what the proxy does)
 *       threads  a reader and a writer thread, four 1 MiB buffers between them, so one
 *                MiB's copy in overlaps the one before's copy out
 *       splice   socket to pipe to socket in the kernel (a 1 MiB pipe), no copy in user space
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK (1 << 20)
#define SLOTS 4

static int copy_all(int to, const char *at, ssize_t n) {
  while (n > 0) {
    ssize_t m = write(to, at, n);
    if (m <= 0) return -1;
    at += m;
    n -= m;
  }
  return 0;
}

static void carry_rw(int from, int to) {
  char *buf = malloc(CHUNK);
  ssize_t n;
  while ((n = read(from, buf, CHUNK)) > 0)
    if (copy_all(to, buf, n)) return;
}

static void carry_splice(int from, int to) {
  int p[2];
  if (pipe(p)) return;
  fcntl(p[0], F_SETPIPE_SZ, CHUNK);
  ssize_t n;
  while ((n = splice(from, NULL, p[1], NULL, CHUNK, SPLICE_F_MOVE | SPLICE_F_MORE)) > 0)
    while (n > 0) {
      ssize_t m = splice(p[0], NULL, to, NULL, n, SPLICE_F_MOVE | SPLICE_F_MORE);
      if (m <= 0) return;
      n -= m;
    }
}

struct ring {
  int from, to;
  char *slot[SLOTS];
  ssize_t len[SLOTS];
  sem_t filled, free;
};

static void *fill(void *arg) {
  struct ring *r = arg;
  for (int i = 0;; i = (i + 1) % SLOTS) {
    sem_wait(&r->free);
    r->len[i] = read(r->from, r->slot[i], CHUNK);
    sem_post(&r->filled);
    if (r->len[i] <= 0) return NULL;
  }
}

static void carry_threads(int from, int to) {
  struct ring r = {.from = from, .to = to};
  for (int i = 0; i < SLOTS; i++) r.slot[i] = malloc(CHUNK);
  sem_init(&r.filled, 0, 0);
  sem_init(&r.free, 0, SLOTS);
  pthread_t reader;
  pthread_create(&reader, NULL, fill, &r);
  for (int i = 0;; i = (i + 1) % SLOTS) {
    sem_wait(&r.filled);
    if (r.len[i] <= 0 || copy_all(to, r.slot[i], r.len[i])) return;
    sem_post(&r.free);
  }
}

static void (*carry)(int, int);

/* One process per direction; each closes its way out when its way in ends. */
static void relay(int client, int upstream) {
  if (fork() == 0) {
    carry(client, upstream);
    shutdown(upstream, SHUT_WR);
    _exit(0);
  }
  carry(upstream, client);
  shutdown(client, SHUT_WR);
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  carry = !strcmp(argv[1], "rw")        ? carry_rw
          : !strcmp(argv[1], "threads") ? carry_threads
          : !strcmp(argv[1], "splice")  ? carry_splice
                                        : NULL;
  if (!carry) return 2;
  struct sockaddr_in up = {.sin_family = AF_INET,
                           .sin_port = htons(atoi(argv[2])),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct sockaddr_in at = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t size = sizeof at;
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (bind(listener, (struct sockaddr *)&at, size) || listen(listener, 16) ||
      getsockname(listener, (struct sockaddr *)&at, &size))
    return 1;
  printf("%d\n", ntohs(at.sin_port));
  fflush(stdout);
  signal(SIGCHLD, SIG_IGN);
  for (;;) {
    int client = accept(listener, NULL, NULL);
    int upstream = socket(AF_INET, SOCK_STREAM, 0);
    if (client >= 0 && connect(upstream, (struct sockaddr *)&up, sizeof up) == 0 && fork() == 0)
      relay(client, upstream);
    close(client);
    close(upstream);
  }
}
