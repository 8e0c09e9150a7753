// Starts, watches and stops the one Chromium process: its switches, its sandbox, and the unprivileged user it runs as when we are root.
import { accessSync, constants as fsConstants, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserServer } from 'playwright-core';
import { ServiceUnavailable } from '../../problems.js';
import { firstLine, settlesWithin } from './support.js';

export interface BrowserLogger {
  warn(obj: object, msg?: string): void;
}

/** How the running browser is confined, for status, logs and tests. */
export interface Confinement {
  /** Chromium's own sandbox (namespaces and seccomp-bpf around every renderer) is on. */
  sandbox: boolean;
  /** The user the browser process runs as. */
  user: string;
  /** Why the sandbox is off, when it is. */
  reason?: string;
}

export interface RunningBrowser {
  server: BrowserServer;
  browser: Browser;
  version: string;
  confinement: Confinement;
}

export interface Launcher {
  /** How many times a browser process was launched (failed attempts and fallbacks included). */
  readonly launches: number;
  /** The connected browser, started if need be: concurrent callers share one launch. */
  ensure(): Promise<RunningBrowser>;
  /** The connected browser, if one is running. */
  current(): RunningBrowser | undefined;
  /** Ends a browser that stopped answering; the next `ensure()` starts a new one. */
  kill(target: RunningBrowser, reason: string): Promise<void>;
  status(): { available: boolean; detail: string };
  /**
   * Refuses new launches at once; when a launch under way has settled, runs `drain` (the contexts'
   * teardown), then closes the browser, killing it if it will not close.
   */
  close(drain: () => Promise<void>): Promise<void>;
}

/**
 * Switches for every launch; playwright-core adds its own, and `--no-sandbox` only when the sandbox
 * cannot start (see `createLauncher`).
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // QUIC (and with it HTTP/3 and WebTransport) is UDP, which the guarding proxy cannot carry.
  '--disable-quic',
  '--no-first-run',
  '--disable-dev-shm-usage',
  // WebRTC's UDP (STUN, TURN) would go around the guarding proxy straight to any address; with this
  // policy WebRTC may only use TCP through the proxy. Chromium reads the first switch into its
  // `webrtc.ip_handling_policy` preference; the headless shell (chrome-headless-shell) reads the
  // second. Each needs its value: a bare switch sets nothing.
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

export const NO_BROWSER_DETAIL = "No headless browser found: install Debian's chromium or set CHROMIUM_PATH.";

const KNOWN_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
const KNOWN_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv'];
/** Chromium refuses its sandbox as root; the browser then runs as this user, whom every Debian has. */
const UNPRIVILEGED_USER = 'nobody';

const LAUNCH_TIMEOUT_MS = 30_000;
/** How long the browser may take to close on close() before the process is killed. */
const CLOSE_GRACE_MS = 2_000;

export function closedError(): ServiceUnavailable {
  return new ServiceUnavailable('The headless browser is shutting down.');
}

/**
 * The browser executable to use: `explicit` (CHROMIUM_PATH) when it is an executable file, else the
 * first of Debian's and Google's usual paths, else those names on `searchPath` (PATH).
 */
export function findChromium(explicit: string | undefined, searchPath: string): string | undefined {
  if (explicit !== undefined && explicit !== '' && isExecutableFile(explicit)) return explicit;
  const known = KNOWN_PATHS.find(isExecutableFile);
  if (known !== undefined) return known;
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '') continue;
    for (const name of KNOWN_NAMES) {
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

export function isExecutableFile(candidate: string): boolean {
  try {
    if (!statSync(candidate).isFile()) return false;
    accessSync(candidate, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

interface UnprivilegedUser {
  name: string;
  uid: number;
  gid: number;
  setpriv: string;
}

/** One way to start the browser; the launcher tries them in order, the best confined first. */
interface LaunchPlan {
  sandbox: boolean;
  /** Started through a wrapper that drops to this user; undefined: as the service's own user. */
  runAs: UnprivilegedUser | undefined;
  /** Why this plan is not the best one, for status and logs. */
  reason?: string;
}

/**
 * Starts Chromium with its sandbox where the machine allows it. As root (where Chromium refuses the
 * sandbox) the browser is started through a small wrapper that drops to `nobody` first. A plan whose
 * confinement the machine refuses (no user namespaces, no setpriv) falls back to the next, with a
 * warning, and the launcher remembers: later launches start from the plan that worked.
 */
export function createLauncher(options: { executablePath: string | undefined; logger?: BrowserLogger }): Launcher {
  const { executablePath, logger } = options;
  let running: RunningBrowser | undefined;
  let launching: Promise<RunningBrowser> | undefined;
  let lastLaunchError: string | undefined;
  let launches = 0;
  let closing = false;
  let plans: LaunchPlan[] | undefined;
  let wrapperDir: string | undefined;

  function ensure(): Promise<RunningBrowser> {
    if (closing) return Promise.reject(closedError());
    if (running?.browser.isConnected()) return Promise.resolve(running);
    // Shared so that concurrent first renders start one process, not one each.
    launching ??= launchBrowser().finally(() => {
      launching = undefined;
    });
    return launching;
  }

  async function launchBrowser(): Promise<RunningBrowser> {
    if (executablePath === undefined) throw new ServiceUnavailable(NO_BROWSER_DETAIL);
    if (!isExecutableFile(executablePath)) {
      throw new ServiceUnavailable(`No executable browser at ${executablePath}: install Debian's chromium or set CHROMIUM_PATH.`);
    }
    plans ??= launchPlans();
    for (;;) {
      const plan = plans[0]!;
      try {
        const started = await launchWith(executablePath, plan);
        lastLaunchError = undefined;
        return started;
      } catch (error) {
        if (error instanceof ServiceUnavailable && closing) throw error;
        const message = error instanceof Error ? error.message : String(error);
        if (plans.length > 1 && refusal(plan, message) !== undefined) {
          const next = plans[1]!;
          next.reason = `${describePlan(plan)} could not start: ${refusal(plan, message) ?? firstLine(error)}`;
          logger?.warn({ executablePath, reason: next.reason }, `headless browser falls back to ${describePlan(next)}`);
          plans.shift();
          continue;
        }
        lastLaunchError = firstLine(error);
        throw new ServiceUnavailable(`Chromium at ${executablePath} could not be started: ${lastLaunchError}`, {
          cause: error,
          retryAfterSeconds: 5,
        });
      }
    }
  }

  async function launchWith(executable: string, plan: LaunchPlan): Promise<RunningBrowser> {
    launches += 1;
    let server: BrowserServer | undefined;
    let browser: Browser;
    try {
      // Loaded on first use: playwright-core is most of the service's idle memory and start-up time.
      const { chromium } = await import('playwright-core');
      // launchServer rather than launch: its kill() is the public way to end a hung process.
      server = await chromium.launchServer({
        executablePath: plan.runAs === undefined ? executable : await wrapperFor(executable, plan.runAs),
        args: CHROMIUM_ARGS,
        // Without it playwright-core adds --no-sandbox itself.
        chromiumSandbox: plan.sandbox,
        timeout: LAUNCH_TIMEOUT_MS,
        // The service's own shutdown closes the renderer; Playwright still kills the process on exit.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      browser = await chromium.connect(server.wsEndpoint(), { timeout: LAUNCH_TIMEOUT_MS });
    } catch (error) {
      if (server !== undefined) await server.kill().catch(() => undefined);
      throw error;
    }
    const started: RunningBrowser = {
      server,
      browser,
      version: browser.version(),
      confinement: {
        sandbox: plan.sandbox,
        user: plan.runAs?.name ?? os.userInfo().username,
        ...(plan.reason === undefined ? {} : { reason: plan.reason }),
      },
    };
    browser.on('disconnected', () => {
      if (running !== started) return;
      running = undefined;
      if (!closing) logger?.warn({ executablePath }, 'headless browser disconnected; the next render starts a new one');
      void started.server.kill().catch(() => undefined);
    });
    if (closing) {
      // close() ran while we were starting: nobody will use this process.
      await server.kill().catch(() => undefined);
      throw closedError();
    }
    running = started;
    return started;
  }

  /** A shell script, private to root, that hands the browser's profile to `user` and starts Chromium as them. */
  async function wrapperFor(executable: string, user: UnprivilegedUser): Promise<string> {
    wrapperDir ??= await mkdtemp(path.join(os.tmpdir(), 'chromium-as-user-'));
    const wrapper = path.join(wrapperDir, 'chromium');
    const ids = `${user.uid}:${user.gid}`;
    // Only config.ts reads our environment, and the browser needs none of it (the service's secrets
    // least of all, readable by every process of a shared user): it starts with a minimal one.
    const script = [
      '#!/bin/sh',
      `# Written by the data aggregator: starts Chromium as ${user.name}, who may use Chromium's sandbox (root may not).`,
      'set -eu',
      'home=/nonexistent',
      'for arg in "$@"; do',
      '  case "$arg" in',
      `    --user-data-dir=*) home=\${arg#--user-data-dir=}; chown -R ${ids} -- "$home" ;;`,
      '  esac',
      'done',
      `exec env -i PATH="$PATH" HOME="$home" LANG="\${LANG:-C.UTF-8}" ${shellQuote(user.setpriv)} --reuid=${user.uid} --regid=${user.gid} --clear-groups -- ${shellQuote(executable)} "$@"`,
      '',
    ].join('\n');
    await writeFile(wrapper, script, { mode: 0o700 });
    return wrapper;
  }

  async function kill(target: RunningBrowser, reason: string): Promise<void> {
    if (running === target) running = undefined;
    logger?.warn({ reason }, 'killing the headless browser; the next render starts a new one');
    await target.server.kill().catch(() => undefined);
  }

  return {
    get launches() {
      return launches;
    },

    ensure,

    current() {
      return running?.browser.isConnected() ? running : undefined;
    },

    kill,

    status() {
      if (closing) return { available: false, detail: 'closed' };
      if (executablePath === undefined) return { available: false, detail: 'not found: set CHROMIUM_PATH' };
      if (running?.browser.isConnected()) {
        return { available: true, detail: `chromium ${running.version}, ${describeConfinement(running.confinement)} (running)` };
      }
      if (!isExecutableFile(executablePath)) return { available: false, detail: `not found at ${executablePath}: set CHROMIUM_PATH` };
      if (lastLaunchError !== undefined) return { available: false, detail: `failed to start ${executablePath}: ${lastLaunchError}` };
      return { available: true, detail: `not started: ${executablePath}` };
    },

    async close(drain) {
      closing = true;
      await launching?.catch(() => undefined);
      await drain();
      const target = running;
      running = undefined;
      if (target !== undefined) {
        await settlesWithin(
          target.browser.close().catch(() => undefined),
          CLOSE_GRACE_MS,
        );
        if (
          !(await settlesWithin(
            target.server.close().catch(() => undefined),
            CLOSE_GRACE_MS,
          ))
        ) {
          await target.server.kill().catch(() => undefined);
        }
      }
      if (wrapperDir !== undefined) await rm(wrapperDir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}

/** The plans for this process, best confined first. */
function launchPlans(): LaunchPlan[] {
  if (process.getuid?.() !== 0)
    return [
      { sandbox: true, runAs: undefined },
      { sandbox: false, runAs: undefined },
    ];
  const user = unprivilegedUser();
  const asRoot: LaunchPlan = { sandbox: false, runAs: undefined };
  if (user === undefined) {
    asRoot.reason = `running as root, and no user "${UNPRIVILEGED_USER}" or no setpriv (util-linux) to run the browser as`;
    return [asRoot];
  }
  return [{ sandbox: true, runAs: user }, { sandbox: false, runAs: user }, asRoot];
}

/**
 * The line of a failed launch's output (Playwright appends the browser's) saying the machine refused
 * this plan's confinement, rather than, say, a crash; undefined when there is none.
 */
function refusal(plan: LaunchPlan, message: string): string | undefined {
  const patterns = [...(plan.sandbox ? [/sandbox|namespace|zygote|seccomp/i] : []), ...(plan.runAs === undefined ? [] : [/setpriv|EACCES|permission denied|not permitted/i])];
  // Playwright's own lines (the command it ran) are not the browser's answer.
  const lines = message.split('\n').filter((candidate) => !candidate.includes('<launching>'));
  const line = lines.find((candidate) => patterns.some((pattern) => pattern.test(candidate)));
  // "[pid=123][err] [0101/000000.000:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! ..."
  return line?.replace(/^(\s*\[[^\]]*\])+\s*/, '').trim();
}

function describePlan(plan: LaunchPlan): string {
  const who = plan.runAs === undefined ? 'as the service user' : `as ${plan.runAs.name}`;
  return `${plan.sandbox ? "Chromium's sandbox" : 'no sandbox'} ${who}`;
}

function describeConfinement(confinement: Confinement): string {
  if (confinement.sandbox) return `sandboxed as ${confinement.user}`;
  return `no sandbox, as ${confinement.user}${confinement.reason === undefined ? '' : ` (${confinement.reason})`}`;
}

/** `nobody` from /etc/passwd, with the setpriv to become them; undefined where either is missing. */
function unprivilegedUser(): UnprivilegedUser | undefined {
  const setpriv = SETPRIV_PATHS.find(isExecutableFile);
  if (setpriv === undefined) return undefined;
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name !== UNPRIVILEGED_USER || uid === undefined || gid === undefined) continue;
    const ids = { uid: Number(uid), gid: Number(gid) };
    if (!Number.isInteger(ids.uid) || !Number.isInteger(ids.gid) || ids.uid === 0) return undefined;
    return { name, ...ids, setpriv };
  }
  return undefined;
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
