// A small MCP Apps host for the tests, built on the official host bridge (AppBridge from
// @modelcontextprotocol/ext-apps). It renders a tool's view in a sandboxed frame (scripts only, an opaque
// origin) and relays the view's tools/call to the test, whose MCP client calls the elicitkit server.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const seen = (window.hostSeen = { modelContext: [], sizes: [] });
let bridge = null;

window.mountView = async (html, context) => {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = "Question from the tool";
  frame.className = "view"; // one per tool call, as a chat shows them
  document.getElementById("chat").append(frame);
  bridge = new AppBridge(
    null,
    { name: "elicitkit-test-host", version: "1.0.0" },
    { serverTools: {}, updateModelContext: { text: {} } },
    { hostContext: context },
  );
  bridge.oncalltool = async (params) => JSON.parse(await window.hostCallTool(JSON.stringify(params)));
  bridge.onupdatemodelcontext = async (params) => {
    seen.modelContext.push(params);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    seen.sizes.push(height);
    if (height) frame.style.height = `${height}px`;
  };
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  // The bridge listens before the view loads, so the view's first message (ui/initialize) is heard.
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
  await initialized;
};

window.sendToolInput = (args) => bridge.sendToolInput({ arguments: args });
window.sendToolResult = (result) => bridge.sendToolResult(result);
window.setHostContext = (context) => bridge.setHostContext(context);

// Resolves once the latest view's frame has kept its height and its place for a few animation frames: the view
// reports its size as it renders (ui/notifications/size-changed) and the frame takes it, moving everything in it,
// so a click aimed before the frame settled can land beside its target.
window.frameSettled = () =>
  new Promise((resolve) => {
    const frames = document.querySelectorAll("iframe.view");
    const frame = frames[frames.length - 1];
    let last = null;
    let still = 0;
    const tick = () => {
      const { height, top } = frame.getBoundingClientRect();
      still = last && last.height === height && last.top === top ? still + 1 : 0;
      last = { height, top };
      if (still >= 5) resolve();
      else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
