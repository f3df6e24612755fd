package kit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// localPod is a container of one of the kit's pod templates turned into a
// local command line, the way kubelet would run it: volumes become
// folders (ConfigMaps and Secrets written out, hostPaths a folder per
// node), mount paths in the arguments become those folders, the
// downward-API environment is filled in and $(VAR) references in the
// arguments are expanded from it.
type localPod struct {
	// image is the container's image (which program stands for it).
	image string
	args  []string
	env   []string
	// mounts maps each mount path to the folder that stands for it.
	mounts map[string]string
}

// podContext is what the downward API would tell a pod.
type podContext struct {
	podName, nodeName string
	// root is the pod's folder; hostPath volumes go under hostRoot (the
	// node's folder, shared by that node's pods).
	root, hostRoot string
	// imageFiles maps a path inside the image to a file here (the
	// libvgpu.so the agent image ships).
	imageFiles map[string]string
}

func (k *Kit) materialize(ctx context.Context, spec corev1.PodSpec, c corev1.Container, pc podContext) (localPod, error) {
	mounts := map[string]string{} // mount path -> local folder
	for _, mount := range c.VolumeMounts {
		local, err := k.volumeFolder(ctx, spec, mount.Name, pc)
		if err != nil {
			return localPod{}, fmt.Errorf("volume %s: %w", mount.Name, err)
		}
		mounts[mount.MountPath] = local
	}
	for inImage, here := range pc.imageFiles {
		mounts[inImage] = here
	}
	env := map[string]string{}
	var envList []string
	for _, variable := range c.Env {
		value := variable.Value
		if from := variable.ValueFrom; from != nil {
			if from.FieldRef == nil {
				return localPod{}, fmt.Errorf("env %s: only fieldRef is supported here", variable.Name)
			}
			switch from.FieldRef.FieldPath {
			case "metadata.namespace":
				value = namespace
			case "metadata.name":
				value = pc.podName
			case "spec.nodeName":
				value = pc.nodeName
			default:
				return localPod{}, fmt.Errorf("env %s: fieldRef %s", variable.Name, from.FieldRef.FieldPath)
			}
		}
		env[variable.Name] = value
		envList = append(envList, variable.Name+"="+value)
	}
	args := make([]string, 0, len(c.Args))
	for _, arg := range c.Args {
		args = append(args, rewritePaths(expand(arg, env), mounts))
	}
	return localPod{image: c.Image, args: args, env: envList, mounts: mounts}, nil
}

// volumeFolder makes the folder a volume stands for.
func (k *Kit) volumeFolder(ctx context.Context, spec corev1.PodSpec, name string, pc podContext) (string, error) {
	for _, volume := range spec.Volumes {
		if volume.Name != name {
			continue
		}
		switch {
		case volume.ConfigMap != nil:
			dir := filepath.Join(pc.root, "volumes", name)
			configMap, err := k.Client.CoreV1().ConfigMaps(namespace).Get(ctx, volume.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			files := map[string][]byte{}
			for key, value := range configMap.Data {
				files[key] = []byte(value)
			}
			return dir, writeFiles(dir, files)
		case volume.Secret != nil:
			dir := filepath.Join(pc.root, "volumes", name)
			secret, err := k.Client.CoreV1().Secrets(namespace).Get(ctx, volume.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return dir, writeFiles(dir, secret.Data)
		case volume.HostPath != nil:
			dir := filepath.Join(pc.hostRoot, strings.TrimPrefix(volume.HostPath.Path, "/"))
			return dir, os.MkdirAll(dir, 0o700)
		case volume.EmptyDir != nil:
			dir := filepath.Join(pc.root, "volumes", name)
			return dir, os.MkdirAll(dir, 0o700)
		}
		return "", fmt.Errorf("volume %s: a kind the kit does not stand in for", name)
	}
	return "", fmt.Errorf("no volume %s in the pod template", name)
}

func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for key, value := range files {
		if err := os.WriteFile(filepath.Join(dir, key), value, 0o600); err != nil {
			return err
		}
	}
	return nil
}

var variableReference = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(NAME) with the container's variable, as kubelet does
// (an unknown name stays as written).
func expand(arg string, env map[string]string) string {
	return variableReference.ReplaceAllStringFunc(arg, func(ref string) string {
		if value, ok := env[ref[2:len(ref)-1]]; ok {
			return value
		}
		return ref
	})
}

// rewritePaths points a path under a mount (or the value of --flag=path)
// at the local folder, longest mount path first.
func rewritePaths(arg string, mounts map[string]string) string {
	prefix, value := "", arg
	if strings.HasPrefix(arg, "-") {
		if i := strings.Index(arg, "="); i >= 0 {
			prefix, value = arg[:i+1], arg[i+1:]
		}
	}
	paths := make([]string, 0, len(mounts))
	for path := range mounts {
		paths = append(paths, path)
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	for _, path := range paths {
		if value == path || strings.HasPrefix(value, path+"/") {
			return prefix + mounts[path] + value[len(path):]
		}
	}
	return arg
}

// setFlag replaces the value of --name (either form) or appends it.
func setFlag(args []string, name, value string) []string {
	flag := "--" + name
	for i, arg := range args {
		if arg == flag && i+1 < len(args) {
			args[i+1] = value
			return args
		}
		if strings.HasPrefix(arg, flag+"=") {
			args[i] = flag + "=" + value
			return args
		}
	}
	return append(args, flag, value)
}
