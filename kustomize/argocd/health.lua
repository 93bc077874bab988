-- Argo CD health of an ExtendedDaemonSet or an ExtendedDaemonSetReplicaSet,
-- read from the Ready, Reconciling and Stalled conditions the controller
-- keeps on both kinds.
--
-- Argo CD runs scripts from argocd-cm with the base, table and package
-- libraries and part of os only, so this one does without string and math.
-- Any field may be missing or of an unexpected type: a Lua error would leave
-- the health of the whole Application unknown, so every value is checked
-- before use.

local hs = {}

local function field(t, key)
  if type(t) == "table" then
    return t[key]
  end
  return nil
end

local function text(v)
  if type(v) == "string" and v ~= "" then
    return v
  end
  return nil
end

-- What a person reads: the controller's message, else its reason.
local function explain(condition, default)
  return text(field(condition, "message")) or text(field(condition, "reason")) or default
end

local function isTrue(condition)
  return field(condition, "status") == "True"
end

local status = field(obj, "status")
-- tonumber also reads generations that reach the script as strings.
local generation = tonumber(field(field(obj, "metadata"), "generation"))
local observed = tonumber(field(status, "observedGeneration"))

-- Conditions written for an older generation say nothing about the spec
-- Argo CD has just synced.
if type(status) ~= "table" or (generation ~= nil and (observed == nil or observed < generation)) then
  hs.status = "Progressing"
  if generation ~= nil then
    hs.message = "waiting for the controller to observe generation " .. generation
  else
    hs.message = "waiting for the controller to report a status"
  end
  return hs
end

local conditions = {}
local list = field(status, "conditions")
if type(list) == "table" then
  for _, condition in ipairs(list) do
    local kind = field(condition, "type")
    if type(kind) == "string" and conditions[kind] == nil then
      conditions[kind] = condition
    end
  end
end

-- A failed canary or a spec the controller cannot carry out: only a change
-- of spec or a retry helps.
local stalled = conditions["Stalled"]
if isTrue(stalled) then
  hs.status = "Degraded"
  hs.message = explain(stalled, "the rollout is stalled")
  return hs
end

-- A canary that waits for a person (paused, auto-paused, an analysis that
-- cannot conclude, a manual canary to validate) is Suspended rather than
-- Progressing: it will not finish by itself.
local reconciling = conditions["Reconciling"]
if isTrue(reconciling) then
  if field(reconciling, "reason") == "CanaryPaused" then
    hs.status = "Suspended"
  else
    hs.status = "Progressing"
  end
  hs.message = explain(reconciling, "rollout in progress")
  return hs
end

local ready = conditions["Ready"]
if isTrue(ready) then
  hs.status = "Healthy"
  local available, desired = tonumber(field(status, "available")), tonumber(field(status, "desired"))
  if available ~= nil and desired ~= nil then
    hs.message = available .. "/" .. desired .. " pods available"
  else
    hs.message = explain(ready, "rolled out")
  end
  -- Malformed resource overrides on nodes do not hold the rollout back, but
  -- the person who wrote them should see that they are ignored.
  local overrides = conditions["ResourceOverrides"]
  if field(overrides, "status") == "False" and text(field(overrides, "message")) ~= nil then
    hs.message = hs.message .. "; " .. overrides.message
  end
  return hs
end

-- A replica set the ExtendedDaemonSet no longer uses (kept for history, or
-- whose remaining pods the active one replaces) has nothing left to do, as
-- Argo CD says of a Deployment's old ReplicaSets.
if field(ready, "reason") == "Inactive" then
  hs.status = "Healthy"
  hs.message = explain(ready, "not active")
  return hs
end

hs.status = "Progressing"
hs.message = explain(ready, "waiting for the controller to report progress")
return hs
