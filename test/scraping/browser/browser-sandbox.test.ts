// The browser runs with Chromium's sandbox (as an unprivileged user when the tests run as root), and says so when it cannot.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createBrowserRenderer } from '../../../src/scraping/browser/index.js';
import { skipUnless } from '../../helpers.js';
import { until } from '../../wait.js';
import { executablePath, noChromium, RENDER_MS, startSite, USER_AGENT, type Site } from './browser-site.js';

const asRoot = process.getuid?.() === 0;

/**
 * Whether this machine lets an unprivileged process make a user namespace, which Chromium's sandbox
 * needs (Debian ships no setuid helper). Asked of `nobody` when we are root, as the browser will be.
 */
function userNamespacesAllowed(): boolean {
  const unshare = ['unshare', '--user', '--map-root-user', 'true'];
  const command = asRoot ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...unshare] : unshare;
  return spawnSync(command[0]!, command.slice(1), { stdio: 'ignore' }).status === 0;
}

/** The process ids below `root` in the process tree. */
async function descendants(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // The command name may hold spaces and parentheses; the fields after its closing one do not.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(Number(entry), ppid);
  }
  const found: number[] = [];
  const walk = (pid: number): void => {
    for (const [child, parent] of parents) {
      if (parent !== pid) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

async function statusField(pid: number, field: string): Promise<string | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(status)?.[1];
}

/**
 * A renderer's seccomp mode once it has started: a renderer just forked (say, for the spare context)
 * enters its sandbox before it reads any page, but may be caught in the instant before, so it is
 * asked again for a while. A process that ended meanwhile could not be read: that is `undefined`,
 * never a pass.
 */
async function seccompOnceStarted(pid: number): Promise<string | undefined> {
  let mode: string | undefined;
  for (let attempt = 0; attempt < 50; attempt++) {
    mode = await statusField(pid, 'Seccomp').catch(() => undefined);
    if (mode === undefined || mode === '2') return mode;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return mode;
}

describe('browser sandbox', { skip: noChromium }, () => {
  let site: Site;
  const guardRequest = async (url: string): Promise<boolean> => url.startsWith(`${site.origin}/`);

  before(async () => {
    site = await startSite();
  });

  after(async () => {
    await site.close();
  });

  // Under CI a machine that refuses user namespaces fails this test instead of skipping it (skipUnless).
  const noUserNamespaces = skipUnless(userNamespacesAllowed(), 'this machine refuses unprivileged user namespaces, so Chromium cannot sandbox (the fallback has its own test)');

  test('the browser runs as an unprivileged user, and every renderer inside the sandbox (own PID namespace, seccomp filter)', { skip: noUserNamespaces }, async (t) => {
    const renderer = createBrowserRenderer({ executablePath, guardRequest, userAgent: USER_AGENT });
    try {
      const page = await renderer.render(`${site.origin}/plain?n=sandboxed`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
      assert.match(page.html, /sandboxed/);
      const pid = renderer.browserPid();
      assert.ok(pid !== undefined);
      const [realUid] = (await statusField(pid, 'Uid'))!.split(/\s+/);
      assert.notEqual(realUid, '0', 'the browser does not run as root');
      assert.deepEqual(renderer.confinement(), { sandbox: true, user: asRoot ? 'nobody' : os.userInfo().username });
      const { detail } = await renderer.status();
      t.diagnostic(detail);
      assert.match(detail, /, sandboxed as \S+ \(running\)$/);

      const ownPidNamespace = await readlink('/proc/self/ns/pid');
      // The finished render's page is closed, and its renderer may be gone: a render held open (its page
      // never answers) keeps one alive while the processes are read. It ends with the browser.
      void renderer.render(`${site.origin}/hang`, { timeoutMs: 60_000 }).catch(() => undefined);
      const rendererPids = async () => {
        const found: number[] = [];
        for (const child of await descendants(pid)) {
          const cmdline = await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '');
          if (cmdline.includes('--type=renderer')) found.push(child);
        }
        return found;
      };
      const renderers = await until(
        'the renderer processes',
        async () => {
          const found = await rendererPids();
          return found.length > 0 ? found : false;
        },
        { withinMs: 10_000 },
      ).catch(() => [] as number[]);
      assert.ok(renderers.length > 0, 'found the renderer processes');
      // A renderer that ends before it is read proves nothing either way: it is left out, and at least one must be read.
      let checked = 0;
      for (const child of renderers) {
        const namespace = await readlink(`/proc/${child}/ns/pid`).catch(() => undefined);
        const seccomp = await seccompOnceStarted(child);
        if (namespace === undefined || seccomp === undefined) {
          t.diagnostic(`renderer ${child} ended before it could be read`);
          continue;
        }
        checked++;
        assert.equal(seccomp, '2', `renderer ${child} runs under a seccomp-bpf filter`);
        assert.notEqual(namespace, ownPidNamespace, `renderer ${child} has a PID namespace of its own`);
      }
      assert.ok(checked > 0, `none of the ${renderers.length} renderers could be read`);
    } finally {
      await renderer.close();
    }
  });

  test('where the sandbox cannot start, the browser falls back to --no-sandbox, renders, and status says why', async (t) => {
    // A stand-in for a machine without user namespaces: this "Chromium" dies as a real one does there, unless told --no-sandbox.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'stand-in-chromium-'));
    const fake = path.join(dir, 'chromium');
    await writeFile(
      fake,
      [
        '#!/bin/sh',
        `case " $* " in *" --no-sandbox "*) exec '${executablePath}' "$@" ;; esac`,
        'echo "[FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! (test stand-in)" >&2',
        'exit 1',
        '',
      ].join('\n'),
    );
    // The browser may run as nobody, who must be able to reach and run it.
    await chmod(dir, 0o755);
    await chmod(fake, 0o755);
    const renderer = createBrowserRenderer({ executablePath: fake, guardRequest, userAgent: USER_AGENT });
    try {
      const page = await renderer.render(`${site.origin}/plain?n=fallback`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
      assert.match(page.html, /fallback/);
      const confinement = renderer.confinement();
      assert.equal(confinement?.sandbox, false);
      assert.equal(confinement?.user, asRoot ? 'nobody' : os.userInfo().username, 'still not root');
      assert.match(confinement?.reason ?? '', /No usable sandbox/);
      const { detail } = await renderer.status();
      t.diagnostic(detail);
      assert.match(detail, /no sandbox, as \S+ \(.*No usable sandbox.*\) \(running\)$/);
      assert.equal(renderer.launches, 2, 'one refused launch, one without the sandbox');
    } finally {
      await renderer.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
